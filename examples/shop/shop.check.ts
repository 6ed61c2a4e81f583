import { DnsCheck, EnvVar, IcmpCheck, StatusPage, StatusPageService } from 'monitors-as-code'

new DnsCheck('shop-dns', {
  name: 'Shop DNS',
  request: {
    query: 'shop.example.com',
    recordType: 'A',
    assertions: [{ source: 'RESPONSE_CODE', comparison: 'EQUALS', target: 'NOERROR' }],
  },
})

new IcmpCheck('edge-ping', {
  name: 'Edge ping',
  request: {
    hostname: 'edge.example.com',
    assertions: [{ source: 'LATENCY', property: 'avg', comparison: 'LESS_THAN', target: '200' }],
  },
  frequency: 10,
})

new EnvVar('API_TOKEN', { value: process.env.API_TOKEN ?? '', secret: true })

const checkout = new StatusPageService('checkout', { name: 'Checkout' })
const search = new StatusPageService('search', { name: 'Search' })

new StatusPage('public', {
  name: 'Shop status',
  url: 'shop-status',
  cards: [{ name: 'Shop', services: [checkout, search] }],
})

new DnsCheck('checkout-dns', {
  name: 'Checkout DNS',
  request: { query: 'checkout.example.com', recordType: 'CNAME' },
  tags: ['checkout'],
  triggerIncident: {
    serviceId: checkout,
    severity: 'MAJOR',
    name: 'Checkout cannot be resolved',
    description: 'checkout.example.com does not resolve from one or more locations.',
    notifySubscribers: true,
  },
})
