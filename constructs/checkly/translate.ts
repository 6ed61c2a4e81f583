/**
 * The props every hosted check and monitor shares, turned into this project's: the config's and
 * the group's defaults applied as the hosted constructs apply them (when the construct is made),
 * then each prop mapped, then what the hosted service's groups impose on their checks.
 */
import { isConstruct } from '../construct.js'
import { GUIDE, Ref, frequencyInto, hostedDefaults, isObject, type Notes, type Props } from './support.js'

/** The hosted props of a group construct made here (CheckGroupV1 / V2), kept on it. */
export const HOSTED_GROUP = Symbol.for('monitors-as-code.checkly.group')

export interface HostedGroup {
  version: 1 | 2
  props: Props
}

/** A reference to a resource not managed in the project (`CheckGroupV2.fromId(12)`, `AlertChannel.fromId(3)`). */
export class PhysicalRef {
  constructor(
    /** What the hosted CLI calls it: CheckGroupRef, AlertChannelRef, StatusPageServiceRef. */
    readonly construct: string,
    readonly physicalId: number | string,
  ) {}
}

export const hostedGroupOf = (value: unknown): HostedGroup | undefined =>
  isConstruct(value) ? (value as unknown as Record<symbol, HostedGroup | undefined>)[HOSTED_GROUP] : undefined

/** What kind of hosted construct: which defaults it takes, which props it has. */
export type Family = 'check' | 'runtime' | 'browser' | 'multistep' | 'playwright' | 'monitor'

/** The props the hosted constructs take from the config's (and the group's) defaults when they leave them out. */
const DEFAULTED = [
  'activated',
  'alertChannels',
  'alertEscalationPolicy',
  'doubleCheck',
  'frequency',
  'locations',
  'muted',
  'privateLocations',
  'retryStrategy',
  'shouldFail',
  'tags',
] as const
const RUNTIME_DEFAULTED = ['environmentVariables', 'runtimeId'] as const

/**
 * The hosted props with the defaults filled in, in the hosted order: for a browser (multi-step)
 * check its group's `browserChecks` (`multiStepChecks`) frequency, the config's `browserChecks`
 * (`multiStepChecks`), then for every check its group's frequency, then the config's `checks`.
 * A check's own value, even an empty list, wins; tags are not merged.
 */
export function withDefaults(hosted: Props, family: Family): Props {
  const config = hostedDefaults()
  const group = hostedGroupOf(hosted.group)?.props
  const sources: Props[] = []
  const groupFrequency = (settings: unknown) => (isObject(settings) && settings.frequency !== undefined ? { frequency: settings.frequency } : {})
  if (family === 'browser') sources.push(groupFrequency(group?.browserChecks), config.browserChecks)
  if (family === 'multistep') sources.push(groupFrequency(group?.multiStepChecks), config.multiStepChecks)
  sources.push(groupFrequency(group), family === 'playwright' ? { ...config.checks, retryStrategy: undefined, doubleCheck: undefined } : config.checks)
  const keys: readonly string[] = family === 'check' || family === 'monitor' ? DEFAULTED : [...DEFAULTED, ...RUNTIME_DEFAULTED]
  const out: Props = { ...hosted }
  for (const key of keys) {
    if (out[key] !== undefined) continue
    if (family === 'monitor' && key === 'doubleCheck') continue
    for (const source of sources) {
      if (source[key] !== undefined) {
        out[key] = source[key]
        break
      }
    }
  }
  return out
}

/** Props every check here has that the hosted constructs name the same. */
const SAME = ['name', 'activated', 'muted', 'shouldFail', 'locations', 'tags', 'runParallel'] as const

/** The hosted props the common mapping handles; the rest are the construct's own (or unknown: passed on, so that validation names them). */
const HANDLED = new Set<string>([
  ...SAME,
  'description',
  'doubleCheck',
  'privateLocations',
  'frequency',
  'groupId',
  'group',
  'alertChannels',
  'alertEscalationPolicy',
  'testOnly',
  'retryStrategy',
  'triggerIncident',
  'intent',
  'aiAutoRepairEnabled',
  'runtimeId',
  'environmentVariables',
])

export interface Translated {
  /** This project's props of the common fields. */
  props: Props
  notes: Notes
  /** The hosted props not handled here: the construct's own (request, code, ...). */
  rest: Props
}

/**
 * The common props of a hosted check or monitor (`construct` names it in notes) as this
 * project's, its defaults applied; see docs/migrating-from-checkly.md for each difference.
 */
export function translateCheck(construct: string, given: Props, family: Family): Translated {
  const hosted = withDefaults(isObject(given) ? given : {}, family)
  const notes: Notes = []
  const props: Props = {}
  const rest: Props = {}
  for (const [key, value] of Object.entries(hosted)) if (!HANDLED.has(key) && value !== undefined) rest[key] = value
  for (const key of SAME) if (hosted[key] !== undefined) props[key] = hosted[key]
  frequencyInto(props, hosted.frequency)
  descriptionInto(props, notes, hosted, family)
  retriesInto(props, notes, hosted, family)
  groupInto(props, notes, hosted)
  channelsInto(props, notes, hosted.alertChannels)
  if (hosted.alertEscalationPolicy !== undefined) {
    props.alertSettings = hosted.alertEscalationPolicy
    props.useGlobalAlertSettings = false
  }
  if (hosted.triggerIncident !== undefined) props.triggerIncident = incidentOf(hosted.triggerIncident, notes)
  runtimeInto(props, notes, hosted, family, construct)
  privateLocationsInto(props, notes, hosted.privateLocations)
  if (hosted.testOnly === true) {
    notes.push({
      level: 'skip',
      field: 'testOnly',
      message:
        'is true: the check is left out of the project, since monitors applies every check it loads and has no test-only checks (monitors test does not run it either); remove testOnly to deploy it',
    })
  }
  for (const key of ['intent', 'aiAutoRepairEnabled'] as const) {
    if (hosted[key] !== undefined && hosted[key] !== null)
      notes.push({ level: 'warning', field: key, message: `is a setting of the hosted service's AI features, which monitors does not have: not kept` })
  }
  groupOverrides(props, hosted, family)
  return { props, notes, rest }
}

/**
 * `privateLocations` as given: PrivateLocation constructs of the project and slugs; a location
 * by its id only (`PrivateLocation.fromId`) is a problem, since checks here name locations by slug.
 */
export function privateLocationsInto(props: Props, notes: Notes, given: unknown): void {
  if (!Array.isArray(given) || given.length === 0) return
  given.forEach((item, i) => {
    if (item instanceof PhysicalRef)
      notes.push({
        level: 'problem',
        field: `privateLocations.${i}`,
        message: `PrivateLocation.fromId(${JSON.stringify(item.physicalId)}): name the location by its slugName ('office') or its construct (see ${GUIDE})`,
      })
  })
  props.privateLocations = given.filter((item) => !(item instanceof PhysicalRef))
}

function descriptionInto(props: Props, notes: Notes, hosted: Props, family: Family): void {
  const text = hosted.description
  if (text === undefined || text === null) return
  if (family === 'browser' || family === 'multistep' || family === 'playwright') props.description = text
  else if (text !== '')
    notes.push({ level: 'warning', field: 'description', message: 'is not kept: here only browser, multi-step and Playwright checks have a description' })
}

/** A retry strategy as this project takes it: `onlyOn` is a list here. */
export function retryStrategyOf(strategy: unknown): unknown {
  if (!isObject(strategy) || typeof strategy.onlyOn !== 'string') return strategy
  return { ...strategy, onlyOn: [strategy.onlyOn] }
}

function retriesInto(props: Props, notes: Notes, hosted: Props, family: Family): void {
  if (hosted.retryStrategy !== undefined) props.retryStrategy = retryStrategyOf(hosted.retryStrategy)
  if (family === 'monitor') {
    // monitors never take doubleCheck: they do not retry unless a retryStrategy says so
    if (hosted.doubleCheck !== undefined)
      notes.push({
        level: 'problem',
        field: 'doubleCheck',
        message: `is not a prop of monitors: use retryStrategy (RetryStrategyBuilder.fixedStrategy({ maxRetries: 1, baseBackoffSeconds: 0, sameRegion: false }) retries once at once)`,
      })
    props.doubleCheck = false
    return
  }
  if (hosted.doubleCheck !== undefined) props.doubleCheck = hosted.doubleCheck
  // "no retries" leaves the legacy double check off too, as the hosted CLI sends it
  else if (isObject(hosted.retryStrategy) && hosted.retryStrategy.type === 'NO_RETRIES') props.doubleCheck = false
}

function groupInto(props: Props, notes: Notes, hosted: Props): void {
  let group = hosted.group
  if (group === undefined && hosted.groupId !== undefined) {
    const target = hosted.groupId instanceof Ref ? hosted.groupId.target : undefined
    if (target) group = target
    else {
      notes.push({
        level: 'problem',
        field: 'groupId',
        message: `names a group by logical id (${describeRef(hosted.groupId)}): write group: theGroup, the group construct itself (or CheckGroupV2.fromId(id) for a group not in the project)`,
      })
      return
    }
  }
  if (group === undefined) return
  if (group instanceof PhysicalRef) props.groupId = typeof group.physicalId === 'number' ? group.physicalId : Number(group.physicalId)
  else props.group = group
}

const describeRef = (value: unknown) => (value instanceof Ref ? `Ref.from(${JSON.stringify(value.ref)})` : (JSON.stringify(value) ?? String(value)))

/**
 * `alertChannels`: channel constructs stay (they become subscriptions when applied); a
 * reference to a channel not in the project (`AlertChannel.fromId(12)`) is a subscription by id.
 */
export function channelsInto(props: Props, notes: Notes, channels: unknown, subscriptionsField = 'alertChannelSubscriptions'): void {
  if (channels === undefined) return
  if (!Array.isArray(channels)) {
    props.alertChannels = channels
    return
  }
  const constructs: unknown[] = []
  const byId: Array<{ alertChannelId: number; activated: boolean }> = []
  channels.forEach((channel, i) => {
    if (channel instanceof PhysicalRef) {
      const id = Number(channel.physicalId)
      if (Number.isInteger(id)) byId.push({ alertChannelId: id, activated: true })
      else
        notes.push({
          level: 'problem',
          field: `alertChannels.${i}`,
          message: `AlertChannel.fromId(${JSON.stringify(channel.physicalId)}): an alert channel's id is a number`,
        })
    } else constructs.push(channel)
  })
  if (constructs.length > 0) props.alertChannels = constructs
  if (byId.length > 0) props[subscriptionsField] = byId
}

function incidentOf(trigger: unknown, notes: Notes): unknown {
  if (!isObject(trigger)) return trigger
  const { service, ...rest } = trigger
  if (service instanceof PhysicalRef) {
    notes.push({
      level: 'problem',
      field: 'triggerIncident.service',
      message: `StatusPageService.fromId(${JSON.stringify(service.physicalId)}): a check here opens incidents on a StatusPageService of the project only; declare the service with new StatusPageService(...)`,
    })
    return undefined
  }
  return { serviceId: service, ...rest }
}

function runtimeInto(props: Props, notes: Notes, hosted: Props, family: Family, construct: string): void {
  if (family === 'check' || family === 'monitor') return
  if (hosted.runtimeId !== undefined) props.runtimeId = hosted.runtimeId
  const vars = hosted.environmentVariables
  if (vars === undefined) return
  if (family !== 'runtime') {
    props.environmentVariables = vars
    return
  }
  // an API check's own variables: none here
  if (Array.isArray(vars) && vars.length === 0) return
  notes.push({
    level: 'problem',
    field: 'environmentVariables',
    message: `${construct}s have no variables of their own here: put them on the check's group (CheckGroupV2 environmentVariables) or make them account variables (new EnvVar('KEY', { value }) from monitors-as-code); {{KEY}} in the request reads both`,
  })
}

/**
 * What a hosted group imposes on its checks (docs/migrating-from-checkly.md, "Groups"): its
 * locations replace theirs; its retry strategy, run-parallel setting and alert escalation
 * policy replace theirs when it sets them (a V1 group also when it does not: its checks then
 * follow the group's doubleCheck, and the account's alert settings).
 */
function groupOverrides(props: Props, hosted: Props, family: Family): void {
  const group = hostedGroupOf(hosted.group ?? (hosted.groupId instanceof Ref ? hosted.groupId.target : undefined))
  if (!group) return
  const g = group.props
  const v1 = group.version === 1
  // the group's locations apply: the check names none of its own
  if (Array.isArray(g.locations) && g.locations.length > 0) props.locations = null
  if (family !== 'playwright') {
    // the group's strategy applies (the service gives it to a check that has none)
    if (g.retryStrategy !== undefined) delete props.retryStrategy
    else if (v1) {
      // a V1 group's checks follow its doubleCheck (true unless set; a monitor's false)
      delete props.retryStrategy
      props.doubleCheck = g.doubleCheck !== undefined ? g.doubleCheck : family !== 'monitor'
    }
  }
  if (g.runParallel !== undefined) props.runParallel = g.runParallel
  else if (v1) props.runParallel = false
  if (v1 || g.alertEscalationPolicy !== undefined) {
    delete props.alertSettings
    props.useGlobalAlertSettings = true
  }
}
