import { test, expect } from '@playwright/test'

test('the orders API lists orders @smoke', async ({ request }) => {
  const list = await request.get('/api/orders')
  expect(list.status()).toBe(200)
  const { orders } = (await list.json()) as { orders: unknown[] }
  expect(orders.length).toBeGreaterThan(0)
})
