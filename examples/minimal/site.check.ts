import { DnsCheck } from 'monitors-as-code'

new DnsCheck('site-dns', {
  name: 'Site DNS',
  request: { query: 'example.com' },
  locations: ['eu-west-1'],
})
