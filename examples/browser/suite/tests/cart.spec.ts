import { test, expect } from '@playwright/test'
import { CART_HEADING } from './shop.js'

test('the cart opens from the home page @smoke', async ({ page }) => {
  await page.goto('/')
  await page.getByRole('link', { name: 'Cart' }).click()
  await expect(page.locator('h1')).toHaveText(CART_HEADING)
})

test('the home page has a title', async ({ page }) => {
  await page.goto('/')
  await expect(page).toHaveTitle(/.+/)
})
