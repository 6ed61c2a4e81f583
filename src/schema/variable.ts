import { z } from 'zod'

export const VARIABLE_KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

export const variableKeySchema = z.string().regex(VARIABLE_KEY_PATTERN, {
  message: 'must be 1-128 characters of A-Z, a-z, 0-9 and _, not starting with a digit',
})

/** Body of POST /v1/variables. */
export const variableSchema = z.object({
  key: variableKeySchema,
  value: z.string(),
  locked: z.boolean().default(false),
  secret: z.boolean().default(false),
})

/** Body of PUT /v1/variables/{key}: the key comes from the path and cannot change. */
export const variableUpdateSchema = z.object({
  key: z.string().optional(),
  value: z.string(),
  locked: z.boolean().default(false),
  secret: z.boolean().default(false),
})

export type VariableInput = z.input<typeof variableSchema>
export type Variable = z.output<typeof variableSchema>
