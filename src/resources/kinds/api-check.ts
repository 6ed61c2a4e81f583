import { apiCheckSchema } from '../../schema/api-check.js'
import type { ResourceDescriptor } from '../types.js'
import { checkDescriptor } from './common.js'

/** An API check (`ApiCheck`). */
export const apiCheck = {
  kind: 'api-check',
  construct: 'ApiCheck',
  example: "new ApiCheck('shop-api', { name: 'Shop API', request: { method: 'GET', url: 'https://shop.example.com/health' } })",
  schema: apiCheckSchema,
  ...checkDescriptor('api', 'API', {
    // the setup and teardown scripts it runs (docs/scripts.md), besides every check's references
    references: [
      { path: 'setupSnippetId', kind: 'snippet', where: ' as its setup script' },
      { path: 'tearDownSnippetId', kind: 'snippet', where: ' as its teardown script' },
    ],
    keyedArrays: { 'request.headers': 'key', 'request.queryParameters': 'key' },
    secretPaths: ['request.headers', 'request.queryParameters', 'request.basicAuth.password'],
  }),
  filledByConstruct: {},
} satisfies ResourceDescriptor
