/**
 * `checkly/constructs`, mapped onto this project's constructs: what a check file written for the
 * hosted service's CLI imports resolves here (the loader points `checkly/constructs` at this
 * module; `monitors-as-code/checkly/constructs` names it directly). See
 * docs/migrating-from-checkly.md for what maps and what does not.
 */
export { ApiCheck, BrowserCheck, MultiStepCheck, PlaywrightCheck } from './checks.js'
export { HeartbeatMonitor, HeartbeatCheck, DnsMonitor, TcpMonitor, TcpCheck, UrlMonitor, IcmpMonitor } from './monitors.js'
export { CheckGroup, CheckGroupV1, CheckGroupV2, CheckGroupRef } from './groups.js'
export {
  AlertChannel,
  AlertChannelRef,
  AlertChannelSubscription,
  EmailAlertChannel,
  SlackAlertChannel,
  WebhookAlertChannel,
  SmsAlertChannel,
  OpsgenieAlertChannel,
  PagerdutyAlertChannel,
  MSTeamsAlertChannel,
  IncidentioAlertChannel,
} from './alert-channels.js'
export { StatusPage, StatusPageService, StatusPageServiceRef, MaintenanceWindow, PrivateLocation, PrivateLocationRef } from './pages.js'
export {
  AssertionBuilder,
  DnsAssertionBuilder,
  TcpAssertionBuilder,
  UrlAssertionBuilder,
  IcmpAssertionBuilder,
  SslAssertionBuilder,
  GrpcAssertionBuilder,
  TracerouteAssertionBuilder,
  NumericAssertionBuilder,
  GeneralAssertionBuilder,
  RetryStrategyBuilder,
  AlertEscalationBuilder,
} from './builders.js'
export type { Assertion, RetryStrategy, RetryStrategyType, RetryStrategyOptions, AlertEscalation, Reminders, ParallelRunFailureThreshold } from './builders.js'
export {
  AgenticCheck,
  Dashboard,
  StatusPageV3,
  StatusPageV3Component,
  StatusPageV3AutomationRule,
  StatusPageV3Ref,
  StatusPageV3ComponentRef,
  SslMonitor,
  GrpcMonitor,
  TracerouteMonitor,
  PrivateLocationCheckAssignment,
  PrivateLocationGroupAssignment,
  PhoneCallAlertChannel,
  SlackAppAlertChannel,
  TelegramAlertChannel,
  Engine,
  TlsVersion,
  CipherSuite,
  SignatureAlgorithm,
} from './unsupported.js'
export { Frequency, Ref } from './support.js'
export type * from './types.js'
