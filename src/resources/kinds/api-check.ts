import { apiCheckSchema } from '../../schema/api-check.js'
import type { ResourceDescriptor } from '../types.js'
import { CHECK_KEYED_ARRAYS, CHECK_UNORDERED_KEYED, checkEndpoints, checksList, TRIGGER_INCIDENT_REFERENCE } from './common.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The service reads secret values of an API check back as "" (basicAuth.password, headers and
 * query parameters marked `secret`): both sides of a comparison hold "" there, so a plan after
 * an apply says "No changes." (a changed secret value alone is therefore not planned: see the
 * README, "ApiCheck").
 */
function blankSecrets(record: Record<string, unknown>): Record<string, unknown> {
  const request = record.request
  if (!isObject(request)) return record
  const out: Record<string, unknown> = { ...request }
  for (const field of ['headers', 'queryParameters']) {
    const items = out[field]
    if (Array.isArray(items)) out[field] = items.map((v: unknown) => (isObject(v) && v.secret === true ? { ...v, value: '' } : v))
  }
  if (isObject(out.basicAuth)) out.basicAuth = { ...out.basicAuth, password: '' }
  return { ...record, request: out }
}

/** An API check (`ApiCheck`). */
export const apiCheck = {
  kind: 'api-check',
  construct: 'ApiCheck',
  example: "new ApiCheck('shop-api', { name: 'Shop API', request: { method: 'GET', url: 'https://shop.example.com/health' } })",
  schema: apiCheckSchema,
  check: true,
  tier: 1,
  displayField: 'name',
  endpoints: checkEndpoints('api'),
  idField: 'id',
  list: checksList('API'),
  identity: { fields: ['name'], unique: false },
  references: [TRIGGER_INCIDENT_REFERENCE],
  setArrays: ['locations', 'tags'],
  keyedArrays: { ...CHECK_KEYED_ARRAYS, 'request.headers': 'key', 'request.queryParameters': 'key' },
  unorderedKeyed: CHECK_UNORDERED_KEYED,
  secrets: { self: false, arrays: ['environmentVariables', 'request.headers', 'request.queryParameters', 'request.basicAuth.password'] },
  filledByConstruct: {},
  normalize: blankSecrets,
} satisfies ResourceDescriptor
