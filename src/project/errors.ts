import { UserError } from '../errors.js'
/** One problem of a project: where it is (file, construct, field) and what is wrong. */
export interface Problem {
  /** File the problem is in, relative to the working directory; empty when no file is involved. */
  file: string
  /** Line (1-based) in `file`, for problems found while importing it. */
  line?: number
  /** Column (1-based) in `file`, for syntax errors. */
  column?: number
  /** Construct class, e.g. `DnsCheck`. */
  construct?: string
  logicalId?: string
  /** Dotted field path, e.g. `request.query`. */
  field?: string
  /** What is wrong and what is allowed; written to follow the field path. */
  message: string
}

/**
 * `shop.check.ts › DnsCheck "shop-dns" › frequencyOffset: must be 1-20 when frequency is 2 (got 25)`.
 * Syntax errors and throws carry their position: `shop.check.ts:3:7 › Unexpected token`.
 */
export function formatProblem(p: Problem): string {
  const parts: string[] = []
  if (p.file) parts.push(p.line ? `${p.file}:${p.line}${p.column ? `:${p.column}` : ''}` : p.file)
  if (p.construct) parts.push(p.logicalId !== undefined ? `${p.construct} ${JSON.stringify(p.logicalId)}` : p.construct)
  parts.push(p.field ? `${p.field}: ${p.message}` : p.message)
  return parts.join(' › ')
}

function countLine(n: number): string {
  return `${n} problem${n === 1 ? '' : 's'} found; nothing was sent.`
}

/**
 * The project cannot be used as written. The message lists every problem, one per line,
 * followed by the count; `problems` holds them as data.
 */
export class ProjectError extends UserError {
  declare readonly problems: Problem[]

  constructor(problems: Problem[]) {
    super([...problems.map(formatProblem), countLine(problems.length)].join('\n'), { problems })
    this.name = 'ProjectError'
  }
}

/**
 * The config declares environments and none was chosen (no `--env`, MONITORS_ENV or
 * `defaultEnvironment`): `environments` lists them, for a command that can go through each.
 */
export class NoEnvironmentError extends ProjectError {
  declare readonly environments: string[]

  constructor(problem: Problem, environments: string[]) {
    super([problem])
    this.name = 'NoEnvironmentError'
    Object.defineProperty(this, 'environments', { value: environments, enumerable: false })
  }
}
