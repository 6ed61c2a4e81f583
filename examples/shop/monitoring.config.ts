import { defineConfig } from 'monitors-as-code'

export default defineConfig({
  projectName: 'shop',
  checkMatch: '**/*.check.ts',
  defaults: { frequency: 5, locations: ['eu-west-1', 'us-east-1'], tags: ['shop'] },
  api: { baseUrl: process.env.MONITORING_API_URL, accountId: process.env.MONITORING_ACCOUNT_ID },
})
