import { test, expect } from '@playwright/test'

test('list the orders, then read the first one', async ({ request }) => {
  const list = await request.get(`${process.env.SHOP_URL}/api/orders`)
  expect(list.status()).toBe(200)
  const { orders } = (await list.json()) as { orders: Array<{ id: number }> }
  expect(orders.length).toBeGreaterThan(0)
  const one = await request.get(`${process.env.SHOP_URL}/api/orders/${orders[0].id}`)
  expect(one.status()).toBe(200)
})
