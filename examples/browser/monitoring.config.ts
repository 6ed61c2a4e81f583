import { defineConfig } from 'monitors-as-code'

// A browser check and a multi-step check of a shop. The shop's address comes from SHOP_URL
// (the tests serve a small shop on 127.0.0.1 and set it); `monitors test` runs both from this
// machine with Debian's Chromium (/usr/bin/chromium) before anything is deployed.
export default defineConfig({
  projectName: 'browser-example',
  checkMatch: ['checks/**/*.check.ts'],
  defaults: { frequency: 10, locations: ['eu-west-1'] },
})
