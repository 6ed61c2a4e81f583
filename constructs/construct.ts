import type { ResourceKind } from '../src/resources/types.js'

/**
 * The key under which the project loader publishes the project being loaded. It is a
 * registered symbol so that every copy of this module (the built package, the TypeScript
 * sources, a second install) finds the same loader.
 */
export const LOADING_KEY = Symbol.for('monitors-as-code.loading')

/** What the loader offers while it imports check files; see src/project/loader.ts. */
export interface LoadingRegistry {
  /**
   * Called by every construct's constructor with `new.target`, so that the loader can find
   * where the `new` expression is (the stack frames above that constructor).
   */
  register(construct: AnyConstruct, constructor: Function): void
  /** The environment the project is loaded for (`--env`), while its check files are imported. */
  readonly environment?: string
  /** Absolute path of the check file being imported (the config file while it loads). */
  readonly current?: string
  /** Absolute path of the project's folder (the config file's). */
  readonly rootDir?: string
  /**
   * A `checkly.config.ts`'s check defaults (its `checks`, `checks.browserChecks`,
   * `checks.multiStepChecks`), which the hosted service's constructs (constructs/checkly/) apply
   * as they are made; undefined for a `monitoring.config.ts`.
   */
  readonly checklyDefaults?: Readonly<Record<string, unknown>>
}

/**
 * What a construct found in its own props that the loader reports with the construct's file:
 * `problem` refuses the project, `warning` is printed, `skip` leaves the construct out of the
 * project and says so. The hosted service's constructs (constructs/checkly/) note what does not
 * map onto this project's.
 */
export interface ConstructNote {
  level: 'problem' | 'warning' | 'skip'
  /** Dotted prop path, as the code names it. */
  field?: string
  message: string
}

/** The property holding a construct's notes (not enumerable, not a prop). */
export const NOTES_KEY = '__monitorsNotes'

/** Options every construct accepts besides its API fields (Pulumi-style resource options). */
export interface ConstructOptions {
  /**
   * Former logical ids of this construct. After a rename, the plan moves the existing
   * resource to the new id instead of deleting and recreating it.
   * @example aliases: ['shop-dns-old']
   */
  aliases?: string[]
  /**
   * Refuse any plan that would delete this resource (also `monitors destroy`).
   * @defaultValue false
   */
  protect?: boolean
  /**
   * When the construct is removed from code, forget the resource instead of deleting it:
   * it keeps running remotely.
   * @defaultValue false
   */
  retainOnDelete?: boolean
}

/** Property that marks an object as a construct, recognised across copies of this module. */
export const KIND_BRAND = '__monitorsKind'

/** The shape every construct has; used to recognise constructs without `instanceof`. */
export interface AnyConstruct {
  readonly __monitorsKind: ResourceKind
  readonly __monitorsConstruct: string
  readonly logicalId: string
  readonly props: Readonly<Record<string, unknown>>
  readonly __monitorsNotes?: readonly ConstructNote[]
}

/** The resource options every construct takes besides its API fields. */
export const OPTION_KEYS = ['aliases', 'protect', 'retainOnDelete'] as const

/**
 * Base of every construct: it keeps the logical id and the props as written and, while a
 * project is being loaded, registers itself in that project with the file that created it.
 * Validation happens in the loader, so that every problem of a project is reported at once.
 */
export abstract class Construct<Props extends object = object> implements AnyConstruct {
  declare readonly __monitorsKind: ResourceKind
  declare readonly __monitorsConstruct: string
  /** The id of this construct in code, unique per kind. Renaming it recreates the resource unless the old id is listed in `aliases`. */
  readonly logicalId: string
  /** The props as given to the constructor. */
  readonly props: Readonly<Props>

  protected constructor(kind: ResourceKind, constructName: string, logicalId: string, props: Props) {
    // the brand lives on the class's prototype, set by its first instance: a project of 10,000
    // constructs defined two properties on every one of them
    const proto = Object.getPrototypeOf(this) as Record<string, unknown>
    if (proto[KIND_BRAND] !== kind || proto.__monitorsConstruct !== constructName) {
      Object.defineProperty(proto, KIND_BRAND, { value: kind, enumerable: false, configurable: true })
      Object.defineProperty(proto, '__monitorsConstruct', { value: constructName, enumerable: false, configurable: true })
    }
    this.logicalId = logicalId
    this.props = props
    const registry = (globalThis as Record<symbol, LoadingRegistry | undefined>)[LOADING_KEY]
    if (registry) registry.register(this as AnyConstruct, new.target)
  }

  /** The resource options among the props (`aliases`, `protect`, `retainOnDelete`). */
  get options(): ConstructOptions {
    const out: Record<string, unknown> = {}
    const props = (this.props ?? {}) as Record<string, unknown>
    for (const key of OPTION_KEYS) if (props[key] !== undefined) out[key] = props[key]
    return out as ConstructOptions
  }
}

/** True for any construct, from any copy of this package. */
export function isConstruct(value: unknown): value is AnyConstruct {
  return typeof value === 'object' && value !== null && typeof (value as Record<string, unknown>)[KIND_BRAND] === 'string'
}
