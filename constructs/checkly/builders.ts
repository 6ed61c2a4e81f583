/**
 * The hosted service's builders: assertions (`AssertionBuilder.statusCode().equals(200)` and the
 * monitors' own), retry strategies and alert escalations. Each returns the plain object the API
 * takes, which this project's constructs take as they are.
 */

/** One assertion as the API takes it. */
export interface Assertion<Source extends string = string> {
  source: Source
  property: string
  comparison: string
  target: string
  regex: string | null
}

function assertion<S extends string>(source: S, comparison: string, target?: unknown, property?: string, regex?: string | null): Assertion<S> {
  return { source, comparison, property: property ?? '', target: target === undefined || target === null ? '' : String(target), regex: regex ?? null }
}

/** Comparisons of a number (a status code, a time). */
export class NumericAssertionBuilder<S extends string = string> {
  constructor(
    readonly source: S,
    readonly property?: string,
  ) {}
  equals(target: number): Assertion<S> {
    return assertion(this.source, 'EQUALS', target, this.property)
  }
  notEquals(target: number): Assertion<S> {
    return assertion(this.source, 'NOT_EQUALS', target, this.property)
  }
  lessThan(target: number): Assertion<S> {
    return assertion(this.source, 'LESS_THAN', target, this.property)
  }
  greaterThan(target: number): Assertion<S> {
    return assertion(this.source, 'GREATER_THAN', target, this.property)
  }
}

/** Comparisons of a text or a JSON value. */
export class GeneralAssertionBuilder<S extends string = string> {
  constructor(
    readonly source: S,
    readonly property?: string,
    readonly regex?: string,
  ) {}
  #make(comparison: string, target?: unknown): Assertion<S> {
    return assertion(this.source, comparison, target, this.property, this.regex)
  }
  equals(target: string | number | boolean): Assertion<S> {
    return this.#make('EQUALS', target)
  }
  notEquals(target: string | number | boolean): Assertion<S> {
    return this.#make('NOT_EQUALS', target)
  }
  hasKey(target: string): Assertion<S> {
    return this.#make('HAS_KEY', target)
  }
  notHasKey(target: string): Assertion<S> {
    return this.#make('NOT_HAS_KEY', target)
  }
  hasValue(target: string | number | boolean): Assertion<S> {
    return this.#make('HAS_VALUE', target)
  }
  notHasValue(target: string | number | boolean): Assertion<S> {
    return this.#make('NOT_HAS_VALUE', target)
  }
  isEmpty(): Assertion<S> {
    return this.#make('IS_EMPTY')
  }
  notEmpty(): Assertion<S> {
    return this.#make('NOT_EMPTY')
  }
  lessThan(target: string | number | boolean): Assertion<S> {
    return this.#make('LESS_THAN', target)
  }
  greaterThan(target: string | number | boolean): Assertion<S> {
    return this.#make('GREATER_THAN', target)
  }
  contains(target: string): Assertion<S> {
    return this.#make('CONTAINS', target)
  }
  notContains(target: string): Assertion<S> {
    return this.#make('NOT_CONTAINS', target)
  }
  isNull(): Assertion<S> {
    return this.#make('IS_NULL')
  }
  isNotNull(): Assertion<S> {
    return this.#make('NOT_NULL')
  }
}

type ApiSource = 'STATUS_CODE' | 'JSON_BODY' | 'HEADERS' | 'TEXT_BODY' | 'RESPONSE_TIME'

/** Assertions of an `ApiCheck`'s response. */
export class AssertionBuilder {
  static statusCode(): NumericAssertionBuilder<ApiSource> {
    return new NumericAssertionBuilder('STATUS_CODE')
  }
  static jsonBody(property?: string): GeneralAssertionBuilder<ApiSource> {
    return new GeneralAssertionBuilder('JSON_BODY', property)
  }
  static headers(property?: string, regex?: string): GeneralAssertionBuilder<ApiSource> {
    return new GeneralAssertionBuilder('HEADERS', property, regex)
  }
  static textBody(property?: string): GeneralAssertionBuilder<ApiSource> {
    return new GeneralAssertionBuilder('TEXT_BODY', property)
  }
  static responseTime(): NumericAssertionBuilder<ApiSource> {
    return new NumericAssertionBuilder('RESPONSE_TIME')
  }
  /** @deprecated the hosted CLI's misspelling of responseTime(), kept for the projects that use it */
  static responseTme(): NumericAssertionBuilder<ApiSource> {
    return new NumericAssertionBuilder('RESPONSE_TIME')
  }
}

type DnsSource = 'RESPONSE_CODE' | 'RESPONSE_TIME' | 'TEXT_ANSWER' | 'JSON_ANSWER'

/** Assertions of a `DnsMonitor`'s answer. */
export class DnsAssertionBuilder {
  static responseCode(): GeneralAssertionBuilder<DnsSource> {
    return new GeneralAssertionBuilder('RESPONSE_CODE')
  }
  static responseTime(): NumericAssertionBuilder<DnsSource> {
    return new NumericAssertionBuilder('RESPONSE_TIME')
  }
  static textAnswer(regex?: string): GeneralAssertionBuilder<DnsSource> {
    return new GeneralAssertionBuilder('TEXT_ANSWER', undefined, regex)
  }
  static jsonAnswer(property?: string): GeneralAssertionBuilder<DnsSource> {
    return new GeneralAssertionBuilder('JSON_ANSWER', property)
  }
}

type TcpSource = 'RESPONSE_DATA' | 'RESPONSE_TIME'

/** Assertions of a `TcpMonitor`'s connection. */
export class TcpAssertionBuilder {
  static responseData(property?: string): GeneralAssertionBuilder<TcpSource> {
    return new GeneralAssertionBuilder('RESPONSE_DATA', property)
  }
  static responseTime(): NumericAssertionBuilder<TcpSource> {
    return new NumericAssertionBuilder('RESPONSE_TIME')
  }
}

/** Assertions of a `UrlMonitor`'s response: its status code. */
export class UrlAssertionBuilder {
  static statusCode(): NumericAssertionBuilder<'STATUS_CODE'> {
    return new NumericAssertionBuilder('STATUS_CODE')
  }
}

type IcmpSource = 'LATENCY' | 'JSON_RESPONSE'

/** Assertions of an `IcmpMonitor`'s pings. */
export class IcmpAssertionBuilder {
  /** `stdDev` is this project's `stddev`; the monitor translates it. */
  static latency(property: 'avg' | 'min' | 'max' | 'stdDev'): NumericAssertionBuilder<IcmpSource> {
    return new NumericAssertionBuilder('LATENCY', property)
  }
  static jsonResponse(property?: string): GeneralAssertionBuilder<IcmpSource> {
    return new GeneralAssertionBuilder('JSON_RESPONSE', property)
  }
}

/**
 * Builders of the monitor types that have no counterpart here (SslMonitor, GrpcMonitor,
 * TracerouteMonitor): they build assertions, so that a file using them loads, and the monitor
 * itself is reported (see unsupported.ts).
 */
function anyBuilder(): Record<string, (property?: string) => GeneralAssertionBuilder> {
  return new Proxy({}, { get: (_t, name) => (property?: string) => new GeneralAssertionBuilder(String(name).toUpperCase(), property) })
}
export const SslAssertionBuilder = anyBuilder()
export const GrpcAssertionBuilder = anyBuilder()
export const TracerouteAssertionBuilder = anyBuilder()

export type RetryStrategyType = 'LINEAR' | 'EXPONENTIAL' | 'FIXED' | 'SINGLE_RETRY' | 'NO_RETRIES'

export interface RetryStrategy {
  type: RetryStrategyType
  baseBackoffSeconds?: number
  maxRetries?: number
  maxDurationSeconds?: number
  sameRegion?: boolean
  onlyOn?: 'NETWORK_ERROR'
}

export type RetryStrategyOptions = Omit<RetryStrategy, 'type'>

/** Retry strategies; every field left out takes the hosted default (60 s, 2 retries, 600 s, same region). */
export class RetryStrategyBuilder {
  static fixedStrategy(options?: RetryStrategyOptions): RetryStrategy {
    return { type: 'FIXED', ...retryDefaults(options) }
  }
  static linearStrategy(options?: RetryStrategyOptions): RetryStrategy {
    return { type: 'LINEAR', ...retryDefaults(options) }
  }
  static exponentialStrategy(options?: RetryStrategyOptions): RetryStrategy {
    return { type: 'EXPONENTIAL', ...retryDefaults(options) }
  }
  static singleRetry(options?: Pick<RetryStrategyOptions, 'baseBackoffSeconds' | 'sameRegion' | 'onlyOn'>): RetryStrategy {
    const { baseBackoffSeconds, sameRegion, onlyOn } = retryDefaults(options)
    return { type: 'SINGLE_RETRY', baseBackoffSeconds, sameRegion, ...(onlyOn ? { onlyOn } : {}) }
  }
  static noRetries(): RetryStrategy {
    return { type: 'NO_RETRIES' }
  }
}

function retryDefaults(options: RetryStrategyOptions | undefined): RetryStrategyOptions {
  return {
    baseBackoffSeconds: options?.baseBackoffSeconds ?? 60,
    maxRetries: options?.maxRetries ?? 2,
    maxDurationSeconds: options?.maxDurationSeconds ?? 600,
    sameRegion: options?.sameRegion ?? true,
    ...(options?.onlyOn ? { onlyOn: options.onlyOn } : {}),
  }
}

export interface Reminders {
  amount?: number
  interval?: number
}

export interface ParallelRunFailureThreshold {
  enabled?: boolean
  percentage?: number
}

/** An alert escalation policy: this project's `alertSettings`. */
export interface AlertEscalation {
  escalationType?: 'RUN_BASED' | 'TIME_BASED'
  runBasedEscalation?: { failedRunThreshold?: number }
  timeBasedEscalation?: { minutesFailingThreshold?: number }
  reminders?: Reminders
  parallelRunFailureThreshold?: ParallelRunFailureThreshold
}

/** Alert escalation policies: after some failed runs, or some minutes failing; reminders none every 5 minutes unless given. */
export class AlertEscalationBuilder {
  static runBasedEscalation(failedRunThreshold: number, reminders?: Reminders, parallelRunFailureThreshold?: ParallelRunFailureThreshold): AlertEscalation {
    return escalation('RUN_BASED', { failedRunThreshold }, { minutesFailingThreshold: 5 }, reminders, parallelRunFailureThreshold)
  }
  static timeBasedEscalation(
    minutesFailingThreshold: number,
    reminders?: Reminders,
    parallelRunFailureThreshold?: ParallelRunFailureThreshold,
  ): AlertEscalation {
    return escalation('TIME_BASED', { failedRunThreshold: 1 }, { minutesFailingThreshold }, reminders, parallelRunFailureThreshold)
  }
}

function escalation(
  escalationType: 'RUN_BASED' | 'TIME_BASED',
  runBasedEscalation: { failedRunThreshold: number },
  timeBasedEscalation: { minutesFailingThreshold: number },
  reminders: Reminders | undefined,
  parallel: ParallelRunFailureThreshold | undefined,
): AlertEscalation {
  return {
    escalationType,
    runBasedEscalation,
    timeBasedEscalation,
    reminders: { amount: reminders?.amount ?? 0, interval: reminders?.interval ?? 5 },
    parallelRunFailureThreshold: { enabled: parallel?.enabled ?? false, percentage: parallel?.percentage ?? 10 },
  }
}
