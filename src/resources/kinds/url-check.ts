import { urlCheckSchema } from '../../schema/url-check.js'
import type { ResourceDescriptor } from '../types.js'
import { checkDescriptor } from './common.js'

/** A URL check (`UrlCheck`). */
export const urlCheck = {
  kind: 'url-check',
  construct: 'UrlCheck',
  example: "new UrlCheck('shop-home', { name: 'Shop home', request: { url: 'https://shop.example.com/' } })",
  schema: urlCheckSchema,
  ...checkDescriptor('url', 'URL'),
  filledByConstruct: {},
} satisfies ResourceDescriptor
