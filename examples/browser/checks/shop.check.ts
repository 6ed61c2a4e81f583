import { BrowserCheck, MultiStepCheck } from 'monitors-as-code'

const site = [{ key: 'SHOP_URL', value: process.env.SHOP_URL ?? 'http://127.0.0.1:8080' }]

// the home page in Chromium: its heading, and the cart link working
new BrowserCheck('shop-home', {
  name: 'Shop home page',
  code: { entrypoint: './home.spec.ts' },
  environmentVariables: site,
})

// the orders API, request by request, without a browser
new MultiStepCheck('orders-api', {
  name: 'Orders API',
  code: { entrypoint: './orders.spec.ts' },
  environmentVariables: site,
})
