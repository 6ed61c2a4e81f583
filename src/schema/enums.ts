/** Vocabularies of the Monitoring API (spec/monitoring-api.md, settled in API.md). */

export const LOCATIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'ca-central-1',
  'sa-east-1',
  'eu-west-1',
  'eu-central-1',
  'eu-west-2',
  'eu-west-3',
  'eu-north-1',
  'eu-south-1',
  'me-south-1',
  'ap-southeast-1',
  'ap-northeast-1',
  'ap-east-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-northeast-2',
  'ap-northeast-3',
  'ap-south-1',
  'af-south-1',
] as const
export type Location = (typeof LOCATIONS)[number]

export const RUNTIME_IDS = ['2025.04', '2024.09', '2024.02', '2023.09', '2023.02', '2022.10'] as const
export type RuntimeId = (typeof RUNTIME_IDS)[number]

/** Minutes between runs. 0 means sub-minute and is only for API and TCP checks. */
export const FREQUENCIES = [0, 1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const
export type Frequency = (typeof FREQUENCIES)[number]
/** The frequencies of the checks that may not run sub-minute (DNS, ICMP), and of the config's check defaults. */
export const RUN_FREQUENCIES = [1, 2, 5, 10, 15, 30, 60, 120, 180, 360, 720, 1440] as const satisfies readonly Frequency[]

export const CHECK_TYPES = ['API', 'BROWSER', 'HEARTBEAT', 'ICMP', 'MULTI_STEP', 'TCP', 'PLAYWRIGHT', 'URL', 'DNS'] as const
export type CheckType = (typeof CHECK_TYPES)[number]

export const DNS_RECORD_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'TXT', 'SOA', 'NS', 'HTTPS'] as const
export const DNS_PROTOCOLS = ['UDP', 'TCP'] as const
export const DNS_ASSERTION_SOURCES = ['RESPONSE_TIME', 'RESPONSE_CODE', 'TEXT_ANSWER', 'JSON_ANSWER'] as const

export const ICMP_IP_FAMILIES = ['IPv4', 'IPv6'] as const
export const ICMP_ASSERTION_SOURCES = ['LATENCY', 'JSON_RESPONSE'] as const
export const ICMP_LATENCY_PROPERTIES = ['avg', 'min', 'max', 'stddev'] as const

export const COMPARISONS = [
  'EQUALS',
  'NOT_EQUALS',
  'HAS_KEY',
  'NOT_HAS_KEY',
  'HAS_VALUE',
  'NOT_HAS_VALUE',
  'IS_EMPTY',
  'NOT_EMPTY',
  'GREATER_THAN',
  'LESS_THAN',
  'CONTAINS',
  'NOT_CONTAINS',
  'IS_NULL',
  'NOT_NULL',
] as const

export const ESCALATION_TYPES = ['RUN_BASED', 'TIME_BASED'] as const
export const RETRY_STRATEGY_TYPES = ['FIXED', 'LINEAR', 'EXPONENTIAL', 'SINGLE_RETRY', 'NO_RETRIES'] as const
export const RETRY_ONLY_ON = ['NETWORK_ERROR'] as const
export const SEVERITIES = ['MINOR', 'MEDIUM', 'MAJOR', 'CRITICAL'] as const
export const WEBHOOK_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'DELETE'] as const

export const THEMES = ['LIGHT', 'DARK', 'AUTO'] as const
export const THEME_COLOR_FIELDS = [
  'bodyBackgroundColor',
  'headerBackgroundColor',
  'headerFontColor',
  'titleFontColor',
  'bodyFontColor',
  'bodyFontColorMuted',
  'navigationFontColor',
  'linkFontColor',
  'cardBackgroundColor',
  'borderColor',
  'primaryButtonBackgroundColor',
  'primaryButtonFontColor',
] as const

export const REPEAT_UNITS = ['DAY', 'WEEK', 'MONTH'] as const
export const INCIDENT_UPDATE_STATUSES = ['INVESTIGATING', 'IDENTIFIED', 'MONITORING', 'RESOLVED', 'MAINTENANCE'] as const
export const RUNTIME_STAGES = ['ALPHA', 'BETA', 'CURRENT', 'DEPRECATED', 'REMOVED', 'STABLE'] as const
export const SESSION_STATUSES = ['FAILED', 'PASSED', 'DEGRADED', 'TIMED_OUT'] as const
