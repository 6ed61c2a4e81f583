import { apiCheckSchema, apiSecretValues, blankApiSecrets } from '../../schema/api-check.js'
import type { ResourceDescriptor } from '../types.js'
import { checkDescriptor, CHECK_KEYED_ARRAYS } from './common.js'

/** An API check (`ApiCheck`). */
export const apiCheck = {
  kind: 'api-check',
  construct: 'ApiCheck',
  example: "new ApiCheck('shop-api', { name: 'Shop API', request: { method: 'GET', url: 'https://shop.example.com/health' } })",
  schema: apiCheckSchema,
  ...checkDescriptor('api', 'API'),
  keyedArrays: { ...CHECK_KEYED_ARRAYS, 'request.headers': 'key', 'request.queryParameters': 'key' },
  secrets: { self: false, arrays: ['environmentVariables', 'request.headers', 'request.queryParameters', 'request.basicAuth.password'] },
  filledByConstruct: {},
  // reads answer secrets as "": both sides compare that way, and the lock's fingerprint of the
  // secret values tells whether one of them changed in code (README, "ApiCheck")
  normalize: blankApiSecrets,
  blankedSecrets: apiSecretValues,
} satisfies ResourceDescriptor
