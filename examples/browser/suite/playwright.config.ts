import { defineConfig, devices } from '@playwright/test'

// The shop's Playwright project: run as it is with `npx playwright test` on a laptop, and by the
// service as the PlaywrightCheck of checks/suite.check.ts (its "desktop" project, tests tagged @smoke).
export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  use: { baseURL: process.env.SHOP_URL ?? 'http://127.0.0.1:8080' },
  projects: [
    { name: 'desktop', use: { ...devices['Desktop Chrome'] } },
    { name: 'narrow', use: { viewport: { width: 390, height: 844 } } },
  ],
})
