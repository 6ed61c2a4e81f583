/** What the shop's pages say: shared by the checks' scripts. */
export const HEADING = 'Shop'
