/**
 * The props of the hosted service's constructs, as its CLI's `checkly/constructs` declares them,
 * so that a project written for it type-checks against `monitors-as-code/checkly`. What each
 * becomes here is in docs/migrating-from-checkly.md.
 */
import type { Assertion, AlertEscalation, RetryStrategy } from './builders.js'
import type { Frequency, Ref } from './support.js'
import type { AnyConstruct, ConstructOptions } from '../construct.js'

/** The hosted service's locations: this project's. */
export type Region =
  | 'us-east-1'
  | 'us-east-2'
  | 'us-west-1'
  | 'us-west-2'
  | 'ca-central-1'
  | 'sa-east-1'
  | 'eu-west-1'
  | 'eu-central-1'
  | 'eu-west-2'
  | 'eu-west-3'
  | 'eu-north-1'
  | 'eu-south-1'
  | 'me-south-1'
  | 'ap-southeast-1'
  | 'ap-northeast-1'
  | 'ap-east-1'
  | 'ap-southeast-2'
  | 'ap-southeast-3'
  | 'ap-northeast-2'
  | 'ap-northeast-3'
  | 'ap-south-1'
  | 'af-south-1'

/** A header, query parameter or variable. */
export interface KeyValuePair {
  key: string
  value: string
  locked?: boolean
  secret?: boolean
}
export type HttpHeader = KeyValuePair
export type QueryParam = KeyValuePair
export type EnvironmentVariable = KeyValuePair

export type IPFamily = 'IPv4' | 'IPv6'
export type HttpRequestMethod =
  | 'get'
  | 'GET'
  | 'post'
  | 'POST'
  | 'put'
  | 'PUT'
  | 'patch'
  | 'PATCH'
  | 'head'
  | 'HEAD'
  | 'delete'
  | 'DELETE'
  | 'options'
  | 'OPTIONS'

/** A script given as a file (relative to the check file) or inline. */
export type Content = { content: string }
export type Entrypoint = { entrypoint: string }

/** A check group construct, a reference to one (`CheckGroupV2.fromId(12)`), or one of this project's. */
export type GroupLike = AnyConstruct | { readonly physicalId: number }
/** An alert channel construct, or a reference to one (`AlertChannel.fromId(12)`). */
export type ChannelLike = AnyConstruct | { readonly physicalId: number }

export interface IncidentTrigger {
  service: AnyConstruct
  severity: 'MINOR' | 'MEDIUM' | 'MAJOR' | 'CRITICAL'
  name: string
  description: string
  notifySubscribers: boolean
}

/** What every check and monitor takes. */
export interface CheckProps extends ConstructOptions {
  name: string
  description?: string | null
  activated?: boolean
  muted?: boolean
  /** @deprecated use retryStrategy */
  doubleCheck?: boolean
  shouldFail?: boolean
  locations?: Region[]
  /** No counterpart here (agents serve this project's locations): a problem when given. */
  privateLocations?: Array<string | AnyConstruct>
  tags?: string[]
  frequency?: number | Frequency
  /** @deprecated use group */
  groupId?: Ref
  group?: GroupLike
  alertChannels?: ChannelLike[]
  alertEscalationPolicy?: AlertEscalation
  /** Left out of the project here, with a warning: monitors applies every check it loads. */
  testOnly?: boolean
  retryStrategy?: RetryStrategy
  runParallel?: boolean
  triggerIncident?: IncidentTrigger
  /** Root cause analysis guidance of the hosted service: not kept here (a warning). */
  intent?: unknown
}

export interface RuntimeCheckProps extends CheckProps {
  runtimeId?: string
  environmentVariables?: EnvironmentVariable[]
}

export interface BasicAuth {
  username: string
  password: string
}

export interface Request {
  url: string
  method: HttpRequestMethod
  ipFamily?: IPFamily
  followRedirects?: boolean
  skipSSL?: boolean
  assertions?: Assertion[]
  body?: string
  bodyType?: 'JSON' | 'FORM' | 'RAW' | 'GRAPHQL' | 'NONE'
  headers?: HttpHeader[]
  queryParameters?: QueryParam[]
  basicAuth?: BasicAuth
}

export interface ApiCheckProps extends RuntimeCheckProps {
  request: Request
  /** @deprecated use setupScript */
  localSetupScript?: string
  setupScript?: Content | Entrypoint
  /** @deprecated use tearDownScript */
  localTearDownScript?: string
  tearDownScript?: Content | Entrypoint
  degradedResponseTime?: number
  maxResponseTime?: number
}

export interface BrowserCheckProps extends RuntimeCheckProps {
  code: Content | Entrypoint
  sslCheckDomain?: string
  /** Playwright `use` options of the hosted runner: not applied here (a warning). */
  playwrightConfig?: Record<string, unknown>
  aiAutoRepairEnabled?: boolean | null
}

export interface MultiStepCheckProps extends RuntimeCheckProps {
  code: Content | Entrypoint
  playwrightConfig?: Record<string, unknown>
  aiAutoRepairEnabled?: boolean | null
}

export interface PlaywrightCheckProps extends Omit<RuntimeCheckProps, 'retryStrategy' | 'doubleCheck'> {
  playwrightConfigPath: string
  installCommand?: string
  testCommand?: string
  pwProjects?: string | string[]
  pwTags?: string | string[]
  include?: string | string[]
  engine?: unknown
  /** @deprecated use group */
  groupName?: string
}

/** What every monitor takes: a check's props without `doubleCheck` (monitors do not retry unless told). */
export type MonitorProps = Omit<CheckProps, 'doubleCheck'>

export interface HeartbeatMonitorProps extends MonitorProps {
  period: number
  periodUnit: 'seconds' | 'minutes' | 'hours' | 'days'
  grace: number
  graceUnit: 'seconds' | 'minutes' | 'hours' | 'days'
}

export interface DnsRequest {
  recordType: 'A' | 'AAAA' | 'CNAME' | 'MX' | 'NS' | 'TXT' | 'SOA' | 'HTTPS'
  query: string
  nameServer?: string
  port?: number
  protocol?: 'UDP' | 'TCP'
  assertions?: Assertion[]
}

export interface DnsMonitorProps extends MonitorProps {
  request: DnsRequest
  degradedResponseTime?: number
  maxResponseTime?: number
}

export interface TcpRequest {
  hostname: string
  port: number
  assertions?: Assertion[]
  ipFamily?: IPFamily
  data?: string
}

export interface TcpMonitorProps extends MonitorProps {
  request: TcpRequest
  degradedResponseTime?: number
  maxResponseTime?: number
}

export interface UrlRequest {
  url: string
  ipFamily?: IPFamily
  followRedirects?: boolean
  skipSSL?: boolean
  assertions?: Assertion[]
}

export interface UrlMonitorProps extends MonitorProps {
  request: UrlRequest
  degradedResponseTime?: number
  maxResponseTime?: number
}

export interface IcmpRequest {
  hostname: string
  ipFamily?: IPFamily
  pingCount?: number
  assertions?: Assertion[]
}

export interface IcmpMonitorProps extends MonitorProps {
  request: IcmpRequest
  degradedPacketLossThreshold?: number
  maxPacketLossThreshold?: number
}

/** Check defaults of a group's browser or multi-step checks, and the spec files that become its checks. */
export interface GroupCheckConfig {
  testMatch: string | string[]
  frequency?: number | Frequency
  [setting: string]: unknown
}

export interface ApiCheckDefaultConfig {
  url?: string
  headers?: HttpHeader[]
  queryParameters?: QueryParam[]
  basicAuth?: BasicAuth
  assertions?: Assertion[]
}

export interface CheckGroupV1Props extends ConstructOptions {
  name: string
  activated?: boolean
  muted?: boolean
  /** @deprecated use retryStrategy */
  doubleCheck?: boolean
  runtimeId?: string
  locations?: Region[]
  privateLocations?: Array<string | AnyConstruct>
  tags?: string[]
  concurrency?: number
  frequency?: number | Frequency
  environmentVariables?: EnvironmentVariable[]
  alertChannels?: ChannelLike[]
  browserChecks?: GroupCheckConfig
  multiStepChecks?: GroupCheckConfig
  alertEscalationPolicy?: AlertEscalation
  /** @deprecated no counterpart on a group here: a problem when given */
  localSetupScript?: string
  /** @deprecated no counterpart on a group here: a problem when given */
  localTearDownScript?: string
  apiCheckDefaults?: ApiCheckDefaultConfig
  retryStrategy?: RetryStrategy
  runParallel?: boolean
}

export interface CheckGroupV2Props extends Omit<CheckGroupV1Props, 'alertEscalationPolicy'> {
  alertEscalationPolicy?: AlertEscalation | 'global'
}

export interface AlertChannelProps extends ConstructOptions {
  sendRecovery?: boolean
  sendFailure?: boolean
  sendDegraded?: boolean
  sslExpiry?: boolean
  sslExpiryThreshold?: number
}

export interface EmailAlertChannelProps extends AlertChannelProps {
  address: string
}

export interface SlackAlertChannelProps extends AlertChannelProps {
  url: URL | string
  /** The channel an incoming webhook posts to is its own: not used here (a warning). */
  channel?: string
}

export interface WebhookAlertChannelProps extends AlertChannelProps {
  name: string
  webhookType?: string
  url: URL | string
  template?: string
  method?: HttpRequestMethod
  headers?: HttpHeader[]
  queryParameters?: QueryParam[]
  /** Bodies are not signed here (a warning). */
  webhookSecret?: string
}

export interface SmsAlertChannelProps extends AlertChannelProps {
  phoneNumber: string
  name?: string
}

export interface OpsgenieAlertChannelProps extends AlertChannelProps {
  name: string
  apiKey: string
  region: 'EU' | 'US'
  priority: 'P1' | 'P2' | 'P3' | 'P4' | 'P5'
}

export interface PagerdutyAlertChannelProps extends AlertChannelProps {
  account?: string
  serviceName?: string
  serviceKey: string
}

export interface MSTeamsAlertChannelProps extends AlertChannelProps {
  name: string
  url: string
  /** A custom card: not used here, Teams gets this project's own card (a warning). */
  payload?: string
}

export interface IncidentioAlertChannelProps extends AlertChannelProps {
  name: string
  url: URL | string
  apiKey: string
  payload?: string
}

export interface AlertChannelSubscriptionProps {
  alertChannelId: Ref
  checkId?: Ref
  groupId?: Ref
  activated: boolean
}

export interface MaintenanceWindowProps extends ConstructOptions {
  name: string
  tags: string[]
  startsAt: Date
  endsAt: Date
  repeatInterval?: number
  repeatUnit?: 'DAY' | 'WEEK' | 'MONTH'
  repeatEndsAt?: Date
}

export interface StatusPageCardProps {
  name: string
  services?: AnyConstruct[]
}

export interface StatusPageProps extends ConstructOptions {
  name: string
  url: string
  cards: StatusPageCardProps[]
  customDomain?: string
  logo?: string
  redirectTo?: string
  favicon?: string
  defaultTheme?: 'AUTO' | 'DARK' | 'LIGHT'
}

export interface StatusPageServiceProps extends ConstructOptions {
  name: string
}

export interface PrivateLocationProps extends ConstructOptions {
  name: string
  slugName: string
  icon?: string
  proxyUrl?: string
}

type CheckDefaults = Pick<
  RuntimeCheckProps,
  | 'activated'
  | 'alertChannels'
  | 'alertEscalationPolicy'
  | 'doubleCheck'
  | 'frequency'
  | 'locations'
  | 'muted'
  | 'privateLocations'
  | 'retryStrategy'
  | 'shouldFail'
  | 'tags'
  | 'environmentVariables'
  | 'runtimeId'
> & { playwrightConfig?: Record<string, unknown> }

/** The default export of `checkly.config.ts`. */
export interface ChecklyConfig {
  projectName: string
  logicalId: string
  repoUrl?: string
  checks?: CheckDefaults & {
    checkMatch?: string | string[]
    ignoreDirectoriesMatch?: string[]
    browserChecks?: CheckDefaults & { testMatch?: string | string[] }
    multiStepChecks?: CheckDefaults & { testMatch?: string | string[] }
    playwrightConfigPath?: string
    include?: string | string[]
    playwrightChecks?: Array<Partial<PlaywrightCheckProps> & { logicalId: string; name: string }>
  }
  cli?: { runLocation?: Region; privateRunLocation?: string; verbose?: boolean; reporters?: string[]; retries?: number }
  [setting: string]: unknown
}
