import { parseUidRange, uidRangeProblem, UID_RANGE_VARIABLE, type UidRange } from '../runner/script/contain.js'
import { UserError } from '../errors.js'
import { io } from './io.js'

/** yargs' coerce of a uid range flag (`200000-200999` or `off`): a clear error naming the flag. */
export function uidRangeOption(flag: string): (value: string | undefined) => UidRange | 'off' | undefined {
  return (value) => {
    if (value === undefined) return undefined
    const problem = uidRangeProblem(String(value))
    if (problem) throw new UserError(`${flag} ${problem}`)
    return parseUidRange(String(value))
  }
}

/** The range of $MONITORS_SCRIPT_UID_RANGE (undefined when unset); a bad one is an error naming the variable. */
export function uidRangeFromEnv(): UidRange | 'off' | undefined {
  const spec = io().env[UID_RANGE_VARIABLE]
  if (spec === undefined || spec === '') return undefined
  const problem = uidRangeProblem(spec)
  if (problem) throw new UserError(`${UID_RANGE_VARIABLE} ${problem}`)
  return parseUidRange(spec)
}
