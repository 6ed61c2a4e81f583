/**
 * The probers: one function per check type that runs from locations, all of one signature
 * `(check, location, context) → outcome`, in one map from the type to its prober (the model of
 * blackbox_exporter's `Probers` map). The server's runner, the agent and `monitors test` run
 * every attempt through `probe` (by way of runCheck in index.ts); a type whose table entry
 * (src/schema/check-types.ts) says `runs: 'probe'` and has no prober here does not compile.
 *
 * A prober does one attempt: no retries, no `shouldFail` (index.ts and outcome.ts do those).
 * It answers what it found, failures included, and does not throw for a run that went wrong;
 * if it throws anyway (a bug), `probe` turns that into an error of the run with the type's
 * empty details, so that a prober's bug never takes the scheduler or an agent down.
 */
import type { RunnableCheckType } from '../schema/check-types.js'
import { blankApiDetails, runApiAttempt } from './api.js'
import { runDnsAttempt } from './dns.js'
import { blankIcmpDetails, runIcmpAttempt } from './icmp.js'
import { runTcpAttempt, tcpDetails } from './tcp.js'
import { runUrlAttempt, urlDetails } from './url.js'
import { blankScriptDetails, runScriptAttempt, runSuiteAttempt } from './script-probe.js'
import { emptyOutcome, type AttemptOutcome, type CheckOfType, type RunnableCheck, type RunOptions } from './types.js'

/** What a prober is given besides its check and location: the run's signal, clock, limits, variables and target policy. */
export type ProbeContext = Omit<RunOptions, 'location'>

/** One attempt of a check of type `T`, from `location`. */
export type Prober<T extends RunnableCheckType> = (check: CheckOfType<T>, location: string, context: ProbeContext) => Promise<AttemptOutcome>

export interface ProberEntry<T extends RunnableCheckType> {
  probe: Prober<T>
  /** The details of an attempt of which nothing is known (its prober failed). */
  blank(check: CheckOfType<T>): AttemptOutcome['details']
}

/** Type → prober. */
export const PROBERS = {
  DNS: {
    probe: (check, location, context) => runDnsAttempt(check, { ...context, location }),
    blank: ({ request }) => ({
      kind: 'DNS',
      query: request.query,
      recordType: request.recordType,
      nameServer: request.nameServer ?? null,
      port: request.port ?? 53,
      protocol: request.protocol,
      rcode: null,
      answers: [],
      textAnswer: '',
      jsonAnswer: null,
    }),
  },
  ICMP: {
    probe: (check, location, context) => runIcmpAttempt(check, { ...context, location }),
    blank: ({ request }) => blankIcmpDetails(request),
  },
  API: {
    probe: (check, location, context) => runApiAttempt(check, { ...context, location }),
    blank: ({ request }) => blankApiDetails(request),
  },
  TCP: {
    probe: (check, location, context) => runTcpAttempt(check, { ...context, location }),
    blank: (check) => tcpDetails(check),
  },
  URL: {
    probe: (check, location, context) => runUrlAttempt(check, { ...context, location }),
    blank: (check) => urlDetails(check),
  },
  BROWSER: {
    probe: (check, location, context) => runScriptAttempt(check, location, context),
    blank: (check) => blankScriptDetails(check),
  },
  MULTI_STEP: {
    probe: (check, location, context) => runScriptAttempt(check, location, context),
    blank: (check) => blankScriptDetails(check),
  },
  PLAYWRIGHT: {
    probe: (check, location, context) => runSuiteAttempt(check, location, context),
    blank: (check) => blankScriptDetails(check),
  },
} satisfies { [T in RunnableCheckType]: ProberEntry<T> }

/** The prober of a check's type (the map's entry, seen through the check's own type). */
function proberOf<T extends RunnableCheckType>(type: T): ProberEntry<T> {
  return PROBERS[type] as unknown as ProberEntry<T>
}

/** One attempt of `check` from `location`, through its type's prober; never throws. */
export async function probe(check: RunnableCheck, location: string, context: ProbeContext): Promise<AttemptOutcome> {
  const prober = proberOf(check.checkType)
  try {
    return await prober.probe(check, location, context)
  } catch (error) {
    return emptyOutcome(prober.blank(check), `the runner failed: ${(error as Error).message}`)
  }
}
