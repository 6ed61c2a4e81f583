/**
 * The public API of monitors-as-code: the constructs users write their monitors with, and
 * `defineConfig` for `monitoring.config.ts`.
 */
export { defineConfig, currentEnvironment } from './config.js'
export type { ProjectConfig, ApiConfig, EnvironmentConfig } from './config.js'
export { DnsCheck } from './dns-check.js'
export type { DnsCheckProps, DnsRequestProps } from './dns-check.js'
export { IcmpCheck } from './icmp-check.js'
export type { IcmpCheckProps, IcmpRequestProps } from './icmp-check.js'
export { ApiCheck, type ApiCheckProps, type ApiRequestProps, type ApiKeyValueProps } from './api-check.js'
export { TcpCheck, type TcpCheckProps, type TcpRequestProps } from './tcp-check.js'
export { UrlCheck, type UrlCheckProps, type UrlRequestProps } from './url-check.js'
export { BrowserCheck, MultiStepCheck, type BrowserCheckProps, type MultiStepCheckProps, type ScriptCheckProps, type ScriptCodeProps } from './script-check.js'
export { PlaywrightCheck, type PlaywrightCheckProps } from './playwright-check.js'
export { HeartbeatCheck, type HeartbeatCheckProps, type HeartbeatProps } from './heartbeat-check.js'
export { EnvVar } from './env-var.js'
export type { EnvVarProps } from './env-var.js'
export { StatusPageService } from './status-page-service.js'
export type { StatusPageServiceProps } from './status-page-service.js'
export { PrivateLocation, type PrivateLocationProps } from './private-location.js'
export { StatusPage } from './status-page.js'
export type { StatusPageProps, StatusPageCardProps } from './status-page.js'
export { MaintenanceWindow } from './maintenance-window.js'
export { Snippet, type SnippetProps, type SnippetCode } from './snippet.js'
export type { MaintenanceWindowProps } from './maintenance-window.js'
export { CheckGroup } from './check-group.js'
export type { CheckGroupProps } from './check-group.js'
export {
  EmailAlertChannel,
  SlackAlertChannel,
  WebhookAlertChannel,
  SmsAlertChannel,
  PagerDutyAlertChannel,
  OpsgenieAlertChannel,
  MSTeamsAlertChannel,
} from './alert-channel.js'
export type {
  AlertChannel,
  AlertChannelSettings,
  AlertChannelSubscriptionProps,
  EmailAlertChannelProps,
  SlackAlertChannelProps,
  WebhookAlertChannelProps,
  SmsAlertChannelProps,
  PagerDutyAlertChannelProps,
  OpsgenieAlertChannelProps,
  MSTeamsAlertChannelProps,
} from './alert-channel.js'
export type { CheckProps, CheckDefaults, TriggerIncidentProps } from './check.js'
export { Construct, isConstruct } from './construct.js'
export type { ConstructOptions, AnyConstruct } from './construct.js'
