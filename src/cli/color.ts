import pc from 'picocolors'
import { io, stdoutIsTTY } from './io.js'

/**
 * Whether the CLI colours its output. picocolors alone treats `CI` as colour-capable, so
 * `CI=true monitors plan > plan.txt` wrote escape codes into the file. Here colour needs a
 * terminal on stdout, or FORCE_COLOR; NO_COLOR and `--no-color` turn it off, `--color` on.
 */
export function colorWanted(options: { flag?: boolean; env?: NodeJS.ProcessEnv; isTTY?: boolean } = {}): boolean {
  const env = options.env ?? io().env
  if (options.flag !== undefined) return options.flag
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false'
  return options.isTTY ?? stdoutIsTTY()
}

/** `--color` / `--no-color` as given on the command line (the last one wins); undefined when neither. */
export function colorFlag(argv: readonly string[]): boolean | undefined {
  let flag: boolean | undefined
  for (const arg of argv) {
    if (arg === '--') break
    if (arg === '--no-color' || arg === '--color=false') flag = false
    else if (arg === '--color' || arg === '--color=true') flag = true
  }
  return flag
}

let enabled: boolean | undefined

/** Set once by main() from the arguments and the environment. */
export function setColor(on: boolean): void {
  enabled = on
}

export function useColor(): boolean {
  if (enabled === undefined) enabled = colorWanted()
  return enabled
}

/** picocolors' functions, honouring the decision above. */
export function paint(): ReturnType<typeof pc.createColors> {
  return pc.createColors(useColor())
}
