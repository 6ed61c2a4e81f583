import { Construct, type ConstructOptions } from './construct.js'

/** Where a snippet's script is: a file of the project, or inline. */
export type SnippetCode = { entrypoint: string } | { content: string }

export interface SnippetProps extends ConstructOptions {
  /**
   * Name of the snippet, 1-200 characters.
   * @example name: 'Auth helper'
   */
  name: string
  /**
   * The Node.js code an API check runs as its setup or teardown script (JavaScript or
   * TypeScript): it may change `request` (setup) and read or change `response` (teardown). Give
   * `script` or `code`.
   * @example script: "request.headers['X-Token'] = process.env.TOKEN"
   */
  script?: string
  /**
   * The script as a file, read when the project is loaded: `entrypoint` is relative to the file
   * that creates the snippet (`{ entrypoint: './snippets/auth.ts' }`); or `content`, inline.
   * @example code: { entrypoint: './snippets/auth-helper.ts' }
   */
  code?: SnippetCode
}

/**
 * A snippet: a named script that API checks run as their setup script (`setupSnippetId`) or
 * teardown script (`tearDownSnippetId`). A check refers to the construct itself; it becomes the
 * snippet's id when the plan is applied.
 *
 * @example
 * const authHelper = new Snippet('auth-helper', { name: 'Auth helper', code: { entrypoint: './snippets/auth-helper.ts' } })
 * new ApiCheck('orders', { name: 'Orders', setupSnippetId: authHelper, request: { method: 'GET', url: 'https://shop.example.com/api/orders' } })
 */
export class Snippet extends Construct<SnippetProps> {
  /**
   * @param logicalId id of the snippet in code, unique among snippets: letters, digits and `_ - / # .`
   * @param props the snippet's name and script
   */
  constructor(logicalId: string, props: SnippetProps) {
    super('snippet', 'Snippet', logicalId, props)
  }
}
