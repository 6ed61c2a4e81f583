/** What the shop's pages say: shared by the suite's tests. */
export const CART_HEADING = 'Your cart'
