import { variableSchema } from '../../schema/variable.js'
import type { ResourceDescriptor } from '../types.js'
import { enc } from './common.js'

/** An account environment variable (`EnvVar`): its key is its logical id and its remote id. */
export const variable = {
  kind: 'variable',
  construct: 'EnvVar',
  example: "new EnvVar('API_HOST', { value: 'api.example.com' })",
  schema: variableSchema,
  check: false,
  tier: 0,
  displayField: 'key',
  logicalIdField: 'key',
  endpoints: {
    create: '/v1/variables',
    update: (key) => `/v1/variables/${enc(key)}`,
    remove: (key) => `/v1/variables/${enc(key)}`,
  },
  idField: 'key',
  list: { collection: 'variables', path: '/v1/variables', paging: 'page' },
  identity: { fields: ['key'], unique: true },
  references: [],
  setArrays: [],
  keyedArrays: {},
  unorderedKeyed: [],
  secrets: { self: true, arrays: [] },
  filledByConstruct: {},
} satisfies ResourceDescriptor
