import { snippetSchema } from '../../schema/snippet.js'
import type { ResourceDescriptor } from '../types.js'
import { enc } from './common.js'

/** A named setup or teardown script of API checks (`Snippet`), referred to by their `setupSnippetId` and `tearDownSnippetId`. */
export const snippet = {
  kind: 'snippet',
  construct: 'Snippet',
  example: "const authHelper = new Snippet('auth-helper', { name: 'Auth helper', script: \"request.headers['x-token'] = process.env.TOKEN\" })",
  schema: snippetSchema,
  check: false,
  tier: 0,
  displayField: 'name',
  endpoints: {
    create: '/v1/snippets',
    update: (id) => `/v1/snippets/${enc(id)}`,
    remove: (id) => `/v1/snippets/${enc(id)}`,
  },
  idField: 'id',
  numericId: true,
  code: { field: 'script' },
  list: { collection: 'snippets', path: '/v1/snippets', paging: 'page' },
  identity: { fields: ['name'], unique: false },
  references: [],
  setArrays: [],
  keyedArrays: {},
  unorderedKeyed: [],
  secrets: { self: false, arrays: [] },
  filledByConstruct: {},
} satisfies ResourceDescriptor
