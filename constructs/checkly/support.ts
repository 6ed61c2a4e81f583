/**
 * What the hosted service's constructs (`checkly/constructs`, mapped here) share: the loader's
 * registry, notes on what does not map, references (`construct.ref()`, `Ref.from`), the
 * `Frequency` constants, and the helpers that turn the hosted shapes into this project's.
 */
import { LOADING_KEY, NOTES_KEY, type AnyConstruct, type ConstructNote, type LoadingRegistry } from '../construct.js'

export type Props = Record<string, unknown>
export type Notes = ConstructNote[]

/** The registry of the project being loaded, if any. */
export function loading(): LoadingRegistry | undefined {
  return (globalThis as Record<symbol, LoadingRegistry | undefined>)[LOADING_KEY]
}

/** The `checks` defaults of the `checkly.config.ts` being loaded, by the kind of check they are for. */
export interface HostedDefaults {
  checks: Props
  browserChecks: Props
  multiStepChecks: Props
}

export function hostedDefaults(): HostedDefaults {
  const given = (loading()?.checklyDefaults ?? {}) as Partial<HostedDefaults>
  return { checks: given.checks ?? {}, browserChecks: given.browserChecks ?? {}, multiStepChecks: given.multiStepChecks ?? {} }
}

/** Sets the notes of a construct (see ConstructNote); nothing when there are none. */
export function attachNotes(construct: object, notes: readonly ConstructNote[]): void {
  if (notes.length > 0) Object.defineProperty(construct, NOTES_KEY, { value: notes, enumerable: false, configurable: true })
}

export const isObject = (v: unknown): v is Props => typeof v === 'object' && v !== null && !Array.isArray(v)

/** Where to read what does not map: the migration guide shipped in the package. */
export const GUIDE = 'docs/migrating-from-checkly.md'

/**
 * A reference to a construct by its logical id (`check.ref()`, `Ref.from('id')`). One made by
 * `ref()` holds the construct itself, so a `groupId: group.ref()` finds its group.
 */
export class Ref {
  readonly ref: string
  declare readonly target?: AnyConstruct

  private constructor(ref: string, target?: AnyConstruct) {
    this.ref = ref
    if (target) Object.defineProperty(this, 'target', { value: target, enumerable: false })
  }

  /** A reference by logical id alone: monitors refers to constructs themselves, so prefer `construct.ref()`. */
  static from(ref: string): Ref {
    return new Ref(ref)
  }

  /** @internal */
  static to(target: AnyConstruct): Ref {
    return new Ref(target.logicalId, target)
  }
}

/**
 * How often a check runs, as the hosted constants name it: minutes, or 0 with an offset of 10,
 * 20 or 30 seconds (sub-minute, API and TCP checks only).
 */
export class Frequency {
  static EVERY_10S = new Frequency(0, 10)
  static EVERY_20S = new Frequency(0, 20)
  static EVERY_30S = new Frequency(0, 30)
  static EVERY_1M = new Frequency(1)
  static EVERY_2M = new Frequency(2)
  static EVERY_5M = new Frequency(5)
  static EVERY_10M = new Frequency(10)
  static EVERY_15M = new Frequency(15)
  static EVERY_30M = new Frequency(30)
  static EVERY_1H = new Frequency(60)
  static EVERY_2H = new Frequency(120)
  static EVERY_3H = new Frequency(180)
  static EVERY_6H = new Frequency(360)
  static EVERY_12H = new Frequency(720)
  static EVERY_24H = new Frequency(1440)

  /** Minutes between runs, 0 for the sub-minute ones. */
  readonly frequency: number
  /** Seconds between runs of a sub-minute frequency. */
  readonly frequencyOffset?: number

  private constructor(frequency: number, frequencyOffset?: number) {
    this.frequency = frequency
    if (frequencyOffset !== undefined) this.frequencyOffset = frequencyOffset
  }
}

/** `frequency` as written (minutes, or a `Frequency`) into this project's `frequency` and `frequencyOffset`. */
export function frequencyInto(out: Props, frequency: unknown): void {
  if (isObject(frequency) && typeof frequency.frequency === 'number') {
    out.frequency = frequency.frequency
    if (typeof frequency.frequencyOffset === 'number') out.frequencyOffset = frequency.frequencyOffset
  } else if (frequency !== undefined) out.frequency = frequency
}

/** A method name as the API wants it (`get` → `GET`). */
export const upper = (v: unknown) => (typeof v === 'string' ? v.toUpperCase() : v)

/** An assertion of the hosted builders without the `regex` they always send (null) where this project has none. */
export function withoutNullRegex(assertions: unknown): unknown {
  if (!Array.isArray(assertions)) return assertions
  return assertions.map((a) => {
    if (!isObject(a) || (a.regex !== null && a.regex !== '' && a.regex !== undefined)) return a
    const { regex: _regex, ...rest } = a
    return rest
  })
}

/** A list of one or more (`'chromium'` or `['chromium']`) as a list. */
export const asList = (v: unknown): unknown => (v === undefined || Array.isArray(v) ? v : [v])
