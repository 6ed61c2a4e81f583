/**
 * Resources: one descriptor per kind (kinds/), the tables derived from them (registry), and
 * what every layer does the same way per kind: normalization, hashing, stable JSON, references
 * and secret fingerprints.
 */
export * from './types.js'
export * from './registry.js'
export { normalize, normalizeParsed } from './normalize.js'
export { appliedHash, desiredHash, maskSecrets, secretHashOf } from './hashes.js'
export { placeholder, resolveRefs, type RemoteIdLookup } from './refs.js'
export { hashValue, jsonEqual, stableStringify } from './stable-json.js'
