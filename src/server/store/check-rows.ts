import type { CheckData } from './index.js'

/*
 * What both stores do with checks rows besides the SQL: the name a search matches.
 */

/** The name a search matches (`name_folded`): the check's name in lower case. */
export function foldedName(data: CheckData): string {
  return typeof data.name === 'string' ? data.name.toLowerCase() : ''
}
