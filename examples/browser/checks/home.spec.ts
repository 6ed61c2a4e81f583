import { test, expect } from '@playwright/test'
import { HEADING } from './lib/expected.js'

test('home page shows the shop and its cart', async ({ page }) => {
  await page.goto(`${process.env.SHOP_URL}/`)
  await expect(page.locator('h1')).toHaveText(HEADING)
  await test.step('open the cart', async () => {
    await page.getByRole('link', { name: 'Cart' }).click()
    await expect(page.locator('h1')).toHaveText('Your cart')
  })
})
