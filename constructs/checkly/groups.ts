/**
 * The hosted service's check groups, `CheckGroupV1` (`CheckGroup`) and `CheckGroupV2`, as this
 * project's `CheckGroup`, and `CheckGroupV2.fromId(12)` for a group not in the project. What a
 * hosted group imposes on its checks (locations, retries, alert policy) is applied by the checks
 * themselves when they are made (translate.ts: groupOverrides).
 */
import path from 'node:path'
import { globSync } from 'tinyglobby'
import { HostedConstruct } from './base.js'
import { BrowserCheck, MultiStepCheck } from './checks.js'
import { isObject, loading, type Notes, type Props } from './support.js'
import { channelsInto, HOSTED_GROUP, PhysicalRef, privateLocationsInto, retryStrategyOf, type HostedGroup } from './translate.js'
import type { CheckGroupV1Props, CheckGroupV2Props } from './types.js'

/** Group props the hosted CLI and this project name alike. */
const SAME = ['name', 'activated', 'muted', 'tags', 'locations', 'concurrency', 'environmentVariables', 'runtimeId', 'runParallel'] as const
const HANDLED = new Set<string>([
  ...SAME,
  'frequency',
  'alertChannels',
  'alertEscalationPolicy',
  'retryStrategy',
  'doubleCheck',
  'privateLocations',
  'localSetupScript',
  'localTearDownScript',
  'apiCheckDefaults',
  'browserChecks',
  'multiStepChecks',
])

function groupProps(version: 1 | 2, given: Props): { props: Props; notes: Notes } {
  const hosted = isObject(given) ? given : {}
  const notes: Notes = []
  const props: Props = {}
  for (const [key, value] of Object.entries(hosted)) if (!HANDLED.has(key) && value !== undefined) props[key] = value
  for (const key of SAME) if (hosted[key] !== undefined) props[key] = hosted[key]
  // a group's frequency is minutes here (a sub-minute offset goes to its checks, which take it)
  if (isObject(hosted.frequency)) props.frequency = hosted.frequency.frequency
  else if (hosted.frequency !== undefined) props.frequency = hosted.frequency
  channelsInto(props, notes, hosted.alertChannels)
  const policy = hosted.alertEscalationPolicy
  if (policy !== undefined && policy !== 'global') {
    props.alertSettings = policy
    props.useGlobalAlertSettings = false
  } else props.useGlobalAlertSettings = true
  if (hosted.retryStrategy !== undefined) props.retryStrategy = retryStrategyOf(hosted.retryStrategy)
  if (hosted.doubleCheck !== undefined) {
    if (version === 1) props.doubleCheck = hosted.doubleCheck
    else
      notes.push({
        level: 'problem',
        field: 'doubleCheck',
        message: `is no longer a prop of CheckGroupV2 (as on the hosted service): use retryStrategy; RetryStrategyBuilder.fixedStrategy({ maxRetries: 1, baseBackoffSeconds: 0, sameRegion: false }) is doubleCheck: true, RetryStrategyBuilder.noRetries() doubleCheck: false`,
      })
  }
  privateLocationsInto(props, notes, hosted.privateLocations)
  for (const field of ['localSetupScript', 'localTearDownScript'] as const) {
    if (hosted[field] !== undefined)
      notes.push({
        level: 'problem',
        field,
        message: `has no counterpart on a group here: give each API check of the group its ${field === 'localSetupScript' ? 'setupScript' : 'tearDownScript'} (a shared function of a module keeps it in one place)`,
      })
  }
  if (hosted.apiCheckDefaults !== undefined) {
    const defaults = hosted.apiCheckDefaults
    props.apiCheckDefaults = isObject(defaults) && defaults.url instanceof URL ? { ...defaults, url: defaults.url.toString() } : defaults
  }
  return { props, notes }
}

/** The spec files `testMatch` matches (relative to the file making the group): a browser or multi-step check each, in the group. */
function specChecks(group: HostedConstruct, settings: unknown, make: (logicalId: string, props: Props) => unknown): void {
  if (!isObject(settings) || settings.testMatch === undefined) return
  const session = loading()
  const from = session?.current ? path.dirname(session.current) : process.cwd()
  const root = session?.rootDir ?? from
  const patterns = (Array.isArray(settings.testMatch) ? settings.testMatch : [settings.testMatch]).filter((p): p is string => typeof p === 'string')
  for (const match of globSync(patterns, { cwd: from, ignore: ['**/node_modules/**', '**/.git/**'] }).sort()) {
    const file = path.join(from, match)
    make(path.relative(root, file).split(path.sep).join('/'), { group, name: match, code: { entrypoint: file } })
  }
}

/** What both versions of the hosted groups share. */
abstract class HostedGroupConstruct extends HostedConstruct {
  declare readonly [HOSTED_GROUP]: HostedGroup

  protected constructor(version: 1 | 2, name: string, logicalId: string, given: Props) {
    super('check-group', name, logicalId, groupProps(version, given))
    const props = isObject(given) ? given : {}
    Object.defineProperty(this, HOSTED_GROUP, { value: { version, props }, enumerable: false, configurable: true })
    specChecks(this, props.browserChecks, (id, p) => new BrowserCheck(id, p as never))
    specChecks(this, props.multiStepChecks, (id, p) => new MultiStepCheck(id, p as never))
  }

  /** A group not managed in this project, by its id: checks join it with `group:`. */
  static fromId(id: number): PhysicalRef {
    return new PhysicalRef('CheckGroupRef', id)
  }
}

/**
 * A check group (the hosted service's v1): settings its checks share. Its retry strategy, alert
 * escalation policy and run-parallel setting always replace its checks' own, set or not.
 * @deprecated as on the hosted service: prefer CheckGroupV2
 */
export class CheckGroupV1 extends HostedGroupConstruct {
  constructor(logicalId: string, props: CheckGroupV1Props) {
    super(1, 'CheckGroupV1', logicalId, props as unknown as Props)
  }
}

/**
 * A check group (the hosted service's v2): settings its checks share; its retry strategy, alert
 * escalation policy and run-parallel setting replace its checks' own only when it sets them.
 */
export class CheckGroupV2 extends HostedGroupConstruct {
  constructor(logicalId: string, props: CheckGroupV2Props) {
    super(2, 'CheckGroupV2', logicalId, props as unknown as Props)
  }
}

/** The hosted CLI's name of a reference to a group (`CheckGroupV2.fromId(12)`). */
export const CheckGroupRef = PhysicalRef

/** `CheckGroup` is the hosted CLI's name of CheckGroupV1. */
export { CheckGroupV1 as CheckGroup }
