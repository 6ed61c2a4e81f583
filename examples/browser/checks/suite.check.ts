import { PlaywrightCheck } from 'monitors-as-code'

// the shop's whole Playwright project (../suite): its "desktop" project, the tests tagged @smoke
new PlaywrightCheck('shop-suite', {
  name: 'Shop smoke suite',
  playwrightConfigPath: '../suite/playwright.config.ts',
  pwProjects: ['desktop'],
  pwTags: ['@smoke'],
  environmentVariables: [{ key: 'SHOP_URL', value: process.env.SHOP_URL ?? 'http://127.0.0.1:8080' }],
})
