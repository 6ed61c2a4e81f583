import { z } from 'zod'

type AddIssue = (issue: { path: PropertyKey[]; message: string; input?: unknown }) => void

/**
 * A rule over several fields of an object that runs even when other fields have already
 * failed, so that every problem is reported at once. zod skips refinements after the first
 * failed field by default; `when` lets this one through. The rule gets the raw input and must
 * check types itself.
 */
export function crossField(rule: (value: Record<string, unknown>, add: AddIssue) => void) {
  return z.superRefine(
    (value: unknown, ctx) => {
      if (!value || typeof value !== 'object' || Array.isArray(value)) return
      rule(value as Record<string, unknown>, (issue) => ctx.addIssue({ code: 'custom', continue: true, ...issue }))
    },
    { when: () => true },
  )
}
