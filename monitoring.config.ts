import { defineConfig } from 'monitors-as-code'

// The repository's own example project: `node bin/monitors.cjs plan` here plans examples/shop.
// examples/shop has its own monitoring.config.ts too, so it can be copied on its own.
export default defineConfig({
  projectName: 'shop',
  checkMatch: 'examples/shop/**/*.check.ts',
  defaults: { frequency: 5, locations: ['eu-west-1', 'us-east-1'], tags: ['shop'] },
  api: { baseUrl: process.env.MONITORING_API_URL, accountId: process.env.MONITORING_ACCOUNT_ID },
})
