import { z } from 'zod'

/** Longest script a snippet (or an API check's local setup or teardown script) may hold, in characters. */
export const SNIPPET_SCRIPT_MAX_LENGTH = 256 * 1024

/**
 * Body of POST /v1/snippets and PUT /v1/snippets/{id} (reference: SnippetCreate): a named piece
 * of Node.js code that API checks run as their setup or teardown script (`setupSnippetId`,
 * `tearDownSnippetId`). See docs/scripts.md.
 */
export const snippetSchema = z.object({
  name: z.string().min(1).max(200),
  script: z.string().min(1).max(SNIPPET_SCRIPT_MAX_LENGTH),
})

export type SnippetInput = z.input<typeof snippetSchema>
export type Snippet = z.output<typeof snippetSchema>
