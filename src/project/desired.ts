import type { z } from 'zod'
import { closest, validate } from '../schema/issues.js'
import { compileFast, type FastResult } from '../schema/fast.js'
import { isConstruct, OPTION_KEYS, type AnyConstruct, type ConstructNote } from '../../constructs/construct.js'
import type { ResolvedConfig } from './config.js'
import type { Problem } from './errors.js'
import type { Registration } from './loader.js'
import type { DesiredResource, ReferenceField, ResourceKind, ResourceOptions, ResourceRef } from '../resources/types.js'
import { CHECK_KINDS, CONSTRUCT_NAMES, descriptorOf, isResourceKind, referredKinds, RESOURCE_KINDS, sitesOf } from '../resources/registry.js'
import { dependencyCycle } from '../schema/check.js'
import { placeholder } from '../resources/refs.js'
import { subscribesToChannels } from '../resources/kinds/alert-channel.js'
import { codeIntoField } from './code-field.js'
import { createHash } from 'node:crypto'
import { constructKey, plainJson, type ConstructCache, type RefToken } from './construct-cache.js'

/** Logical ids: letters, digits and `_ - / # .`. */
export const LOGICAL_ID_PATTERN = /^[A-Za-z0-9_\-/#.]+$/

/** Fields the service sets; accepted by the API but meaningless in code. */
const READ_ONLY_FIELDS = new Set(['id', 'created_at', 'updated_at'])

export interface BuildContext {
  config: ResolvedConfig
  /** Project-root-relative path of an absolute file (for DesiredResource.file). */
  rootRel: (abs: string) => string
  /** Working-directory-relative path of an absolute file (for problems). */
  cwdRel: (abs: string) => string
  /** Config file as shown in problems. */
  configFile: string
  /** What validating constructs produced in earlier loads (construct-cache.ts), when it is used. */
  cache?: ConstructCache
  /** Each construct's cache key when constructsKey made them already. */
  keys?: ReadonlyMap<Registration, string>
}

type AddProblem = (field: string | undefined, message: string) => void

/** What the constructs of one build share while each is turned into a resource. */
interface Build {
  ctx: BuildContext
  problems: Problem[]
  /** what constructs noted of their own props as warnings (constructNotes), files relative to the project */
  warnings: Problem[]
  /** the first registration of each kind and logical id */
  seen: Map<string, Registration>
  /** the fields a construct's body took from the config's defaults; one set, emptied per construct */
  fromDefaults: Set<string>
  registrationOf: (construct: AnyConstruct) => Registration | undefined
  /** how a construct held in props is written in a cache key (refTokens) */
  refToken: RefToken
}

/** Each construct's registration, the map made at the first question: most bodies hold no construct. */
function registrationLookup(registrations: readonly Registration[]): (construct: AnyConstruct) => Registration | undefined {
  let byObject: Map<AnyConstruct, Registration> | undefined
  return (construct) => {
    byObject ??= new Map(registrations.map((r) => [r.construct, r]))
    return byObject.get(construct)
  }
}

/**
 * Turns the placed registrations into desired resources: config defaults merged into checks,
 * references replaced by placeholders, every construct checked with the shared schemas.
 * Returns the resources and every problem found.
 */
export function buildResources(registrations: Registration[], given: BuildContext): { resources: DesiredResource[]; problems: Problem[]; warnings: Problem[] } {
  // thousands of constructs share a few files: each file's relative paths are worked out once
  const ctx: BuildContext = { ...given, rootRel: memo(given.rootRel), cwdRel: memo(given.cwdRel) }
  const problems: Problem[] = []
  const resources: DesiredResource[] = []
  const registrationOf = registrationLookup(registrations)

  outsideProblems(registrations, ctx, problems)
  const inProject = registrations.filter((r) => !r.outside)
  const warnings: Problem[] = []
  const build: Build = { ctx, problems, warnings, seen: new Map(), fromDefaults: new Set(), registrationOf, refToken: refTokens(registrationOf) }
  for (const r of inProject) {
    const resource = buildResource(r, build)
    if (resource) resources.push(resource)
  }

  projectRules(resources, inProject, ctx, problems)
  dependencyCycles(resources, problems)
  resources.sort(
    (a, b) => RESOURCE_KINDS.indexOf(a.kind) - RESOURCE_KINDS.indexOf(b.kind) || (a.logicalId < b.logicalId ? -1 : a.logicalId > b.logicalId ? 1 : 0),
  )
  return { resources, problems, warnings }
}

/** Constructs created outside check files are not part of the project: one problem each. */
function outsideProblems(registrations: Registration[], ctx: BuildContext, problems: Problem[]): void {
  for (const r of registrations) {
    if (!r.outside) continue
    problems.push({
      file: ctx.cwdRel(r.file),
      construct: r.construct.__monitorsConstruct,
      logicalId: String(r.construct.logicalId),
      message: `is created at ${ctx.cwdRel(r.file)}${r.line ? `:${r.line}` : ''}, a file that checkMatch (${ctx.config.checkMatch.join(', ')}) does not match, so it is not part of the project; create it in a check file, or widen checkMatch to include that file`,
    })
  }
}

/** One construct of the project as a desired resource; undefined when it has a problem (each one added). */
function buildResource(r: Registration, build: Build): DesiredResource | undefined {
  const { ctx, problems, fromDefaults } = build
  const c = r.construct
  const name = constructName(c)
  // where a problem is, worked out only when there is one: nearly every construct has none
  const add: AddProblem = (field, message) => problems.push({ file: ctx.cwdRel(r.file), construct: name, logicalId: String(c.logicalId), field, message })
  if (c.__monitorsNotes !== undefined && !constructNotes(c.__monitorsNotes, r, name, build, add)) return undefined
  const kind = identifiedKind(r, name, build.seen, ctx, add)
  if (!kind) return undefined

  const descriptor = descriptorOf(kind)
  // the pure work on plain props (no construct in them, no file read into a field) is kept between commands
  const cacheKey = ctx.cache && !descriptor.code ? (ctx.keys?.get(r) ?? constructKey(kind, name, c.logicalId as string, c.props, build.refToken)) : undefined
  const hit = ctx.cache?.get(cacheKey, r.file)
  if (hit)
    return {
      kind,
      logicalId: c.logicalId as string,
      construct: name,
      file: ctx.rootRel(r.file),
      payload: hit.payload,
      refs: hit.refs ?? [],
      options: hit.options,
    }
  const start = problems.length
  const shape = descriptor.codeShape
  // a problem of the body is named as the props name it (an alert channel's `config.url` is its `url`)
  const addInCode: AddProblem = shape ? (field, message) => add(field === undefined ? field : shape.fieldInCode(field), message) : add
  const { options, input } = splitOptions(c.props as Record<string, unknown>, add)
  const refs: ResourceRef[] = []
  const before = problems.length
  fromDefaults.clear()
  let body: Record<string, unknown> = shape ? shape.toPayload(input) : input
  let addRef = addInCode
  if (descriptor.check) {
    if ('defaultTags' in input && typeof input.defaultTags !== 'boolean')
      add('defaultTags', `must be a boolean: false leaves out the config's default tags (got ${typeof input.defaultTags})`)
    // a check in a group: the group's frequency when the check sets none, and the group's
    // locations (applied by the service) rather than the config's defaults
    groupDefaultsInto(input)
    // `input` is splitOptions' own copy of the props: merged into in place, not copied again
    body = mergeDefaultsInto(input, input.defaultTags === false, input.tags, ctx.config.defaults, fromDefaults)
  }
  if (descriptor.code) body = codeIntoField(body, descriptor.code.field, r.file, ctx.rootRel, add)
  if (subscribesToChannels(descriptor)) {
    const split = splitAlertChannels(body, add)
    body = split.body
    addRef = split.addRef
  }
  body = resolveReferences(kind, body, (value, field, reference, refPath) =>
    resolveRef(value, field, reference, refs, build.registrationOf, ctx, addRef, refPath),
  )
  if (descriptor.check && body.dependsOn !== undefined) {
    body = resolveDependsOn(body, (value, field, wanted) => resolveRef(value, field, { path: field, kind: wanted }, refs, build.registrationOf, ctx, add), add)
  }
  const idField = descriptor.logicalIdField
  if (idField) {
    if (idField in body) add(idField, `is not a prop: the ${idField} is the logical id, new ${descriptor.construct}(${idField}, { value })`)
    body = { ...body, [idField]: c.logicalId }
  }

  let payload = validPayload(descriptor.schema, body, idField, build, addInCode)
  if (payload === undefined || problems.length > before) return undefined
  // a numeric reference was validated as a number: its placeholder goes in now
  for (const ref of refs) if (ref.numeric) payload = setIn(payload, ref.path.split('.'), placeholder(ref.kind, ref.logicalId)) as Record<string, unknown>
  if (cacheKey !== undefined && problems.length === start) ctx.cache!.set(cacheKey, { payload, options, refs }, r.file)
  return { kind, logicalId: c.logicalId as string, construct: name, file: ctx.rootRel(r.file), payload, refs, options }
}

/**
 * What a construct noted of its own props (constructs/construct.ts, ConstructNote: the hosted
 * service's constructs say what does not map): problems added, warnings kept for the project's
 * warnings. False when the construct is not to be built: it has a problem, or a note leaves it
 * out of the project.
 */
function constructNotes(notes: readonly ConstructNote[], r: Registration, name: string, build: Build, add: AddProblem): boolean {
  if (!Array.isArray(notes) || notes.length === 0) return true
  let keep = true
  for (const note of notes) {
    if (note.level === 'problem') {
      add(note.field, note.message)
      keep = false
    } else {
      build.warnings.push({
        file: build.ctx.rootRel(r.file),
        construct: name,
        logicalId: String(r.construct.logicalId),
        field: note.field,
        message: note.message,
      })
      if (note.level === 'skip') keep = false
    }
  }
  return keep
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !isConstruct(v)

/**
 * The `alertChannels` of a check (or of any kind subscribing to channels) written as an array: the channel constructs in it become the
 * check's subscriptions (`alertChannelSubscriptions`, after any it lists by id), its plain
 * objects the inline channels (`{ email: [...] }`, merged by type). The object form is the
 * inline channels as they are. `addRef` names a subscription's problem where the code has it
 * (`alertChannels.1`).
 */
function splitAlertChannels(body: Record<string, unknown>, add: AddProblem): { body: Record<string, unknown>; addRef: AddProblem } {
  const list = body.alertChannels
  if (!Array.isArray(list)) return { body, addRef: add }
  const subscriptions: unknown[] = Array.isArray(body.alertChannelSubscriptions) ? [...body.alertChannelSubscriptions] : []
  const inCode = new Map<number, number>()
  const inline: Record<string, unknown[]> = {}
  list.forEach((item, i) => {
    if (isConstruct(item)) {
      inCode.set(subscriptions.length, i)
      subscriptions.push({ alertChannelId: item, activated: true })
    } else if (isPlainObject(item)) {
      for (const [type, channels] of Object.entries(item)) {
        if (channels === undefined) continue
        if (!Array.isArray(channels)) add(`alertChannels.${i}.${type}`, `must be an array of ${type} channels (got ${describe(channels)})`)
        else (inline[type] ??= []).push(...channels)
      }
    } else {
      add(
        `alertChannels.${i}`,
        `must be an alert channel construct of this project (e.g. ${descriptorOf('email-alert-channel').example}) or inline channels ({ email: [{ address }] }) (got ${describe(item)})`,
      )
    }
  })
  const out: Record<string, unknown> = { ...body }
  delete out.alertChannels
  if (Object.keys(inline).length > 0) out.alertChannels = inline
  if (subscriptions.length > 0) out.alertChannelSubscriptions = subscriptions
  const addRef: AddProblem = (field, message) => {
    const at = field === undefined ? undefined : /^alertChannelSubscriptions\.(\d+)\.alertChannelId$/.exec(field)
    const index = at ? inCode.get(Number(at[1])) : undefined
    add(index === undefined ? field : `alertChannels.${index}`, message)
  }
  return { body: out, addRef }
}

/**
 * The construct's kind when this version knows it, its logical id is well formed and unique in
 * its kind, and its props are an object; else undefined, its problem added.
 */
function identifiedKind(r: Registration, name: string, seen: Map<string, Registration>, ctx: BuildContext, add: AddProblem): ResourceKind | undefined {
  const c = r.construct
  const kind = c.__monitorsKind
  if (!isResourceKind(kind)) {
    add(undefined, `is not a construct this version of monitors knows (kind ${JSON.stringify(kind)})`)
    return undefined
  }
  if (typeof c.logicalId !== 'string' || !LOGICAL_ID_PATTERN.test(c.logicalId)) {
    add(
      undefined,
      `logical id must be one or more of A-Z, a-z, 0-9 and _ - / # . (got ${typeof c.logicalId === 'string' ? JSON.stringify(c.logicalId) : typeof c.logicalId})`,
    )
    return undefined
  }
  const dupKey = `${kind}\u0000${c.logicalId}`
  const first = seen.get(dupKey)
  if (first) {
    const what = descriptorOf(kind).logicalIdField ?? 'logical id'
    add(
      undefined,
      `duplicate ${what}: ${name} ${JSON.stringify(c.logicalId)} is also declared at ${ctx.cwdRel(first.file)}${first.line ? `:${first.line}` : ''}; ${what}s must be unique per kind`,
    )
    return undefined
  }
  seen.set(dupKey, r)

  const props = c.props as unknown
  if (typeof props !== 'object' || props === null || Array.isArray(props)) {
    add(
      undefined,
      `props must be an object (got ${props === null ? 'null' : Array.isArray(props) ? 'an array' : typeof props}): new ${name}(${JSON.stringify(c.logicalId)}, { ... })`,
    )
    return undefined
  }
  return kind
}

/** The body checked with the kind's schema: unknown fields, then the schema's own issues (naming the defaults they came from). */
function validPayload(
  schema: z.ZodType,
  body: Record<string, unknown>,
  idField: string | undefined,
  build: Build,
  add: AddProblem,
): Record<string, unknown> | undefined {
  const fast = fastValidation(schema, body)
  // the walk for unknown fields finds nothing when the fast path met only its shapes' keys
  // (the service's read-only fields at the top are known to the schema, but not props)
  if (!(fast?.ok && fast.exact && !hasReadOnlyField(body))) {
    for (const field of unknownFields(schema, body)) {
      if (idField && field.path === idField) continue
      add(field.path, field.message)
    }
  }
  const result = fast?.ok ? fast : validate(schema, body)
  if (result.ok) return result.data as Record<string, unknown>
  for (const issue of result.issues) {
    const top = issue.path.split('.')[0]
    const suffix = build.fromDefaults.has(top) ? ` (from defaults in ${build.ctx.configFile})` : ''
    const ofId = idField !== undefined && issue.path === idField
    add(ofId ? undefined : issue.path || undefined, (ofId ? `${idField} ` : '') + issue.message + suffix)
  }
  return undefined
}

/** Each schema's fast path, compiled on first use; null when the schema has a part it does not mirror. */
const fastValidators = new WeakMap<z.ZodType, ((input: unknown) => FastResult) | null>()

/**
 * The fast path's answer for a construct's body (a valid body, the common case, without zod's
 * per-field allocations), or undefined when the schema has no fast path. When it is not sure,
 * the loader asks zod itself, so every message is zod's.
 */
function fastValidation(schema: z.ZodType, body: unknown): FastResult | undefined {
  let fast = fastValidators.get(schema)
  if (fast === undefined) {
    fast = compileFast(schema) ?? null
    fastValidators.set(schema, fast)
  }
  return fast?.(body)
}

/** Whether the body sets a field only the service sets (reported by unknownFields at the top level). */
function hasReadOnlyField(body: Record<string, unknown>): boolean {
  for (const field of READ_ONLY_FIELDS) if (body[field] !== undefined) return true
  return false
}

function memo(f: (abs: string) => string): (abs: string) => string {
  const known = new Map<string, string>()
  return (abs) => {
    let out = known.get(abs)
    if (out === undefined) known.set(abs, (out = f(abs)))
    return out
  }
}

function constructName(c: AnyConstruct): string {
  return c.__monitorsConstruct || CONSTRUCT_NAMES[c.__monitorsKind] || 'Construct'
}

/** Rules over the whole project that the service enforces across resources. */
function projectRules(resources: DesiredResource[], registrations: Registration[], ctx: BuildContext, problems: Problem[]) {
  const fileOf = (res: DesiredResource) => registrations.find((r) => r.construct.logicalId === res.logicalId && r.construct.__monitorsKind === res.kind)
  // aliases: each former id moves one lock entry, to one construct, and only once it is gone
  const where = (res: DesiredResource) => {
    const r = fileOf(res)
    return r ? ctx.cwdRel(r.file) : res.file
  }
  // made when the first alias is met: most projects have none
  let live: Map<string, DesiredResource> | undefined
  const claims = new Map<string, DesiredResource>()
  for (const res of resources) {
    if (!res.options.aliases) continue
    live ??= new Map(resources.map((r) => [`${r.kind}\u0000${r.logicalId}`, r]))
    for (const [i, alias] of res.options.aliases.entries()) {
      if (alias === res.logicalId) continue
      const key = `${res.kind}\u0000${alias}`
      const problem = (message: string) =>
        problems.push({ file: where(res), construct: res.construct, logicalId: res.logicalId, field: `aliases.${i}`, message })
      const owner = live.get(key)
      if (owner) {
        problem(
          `${JSON.stringify(alias)} is the logical id of ${owner.construct} ${JSON.stringify(owner.logicalId)} (${where(owner)}), which is still in the code: an alias names an id that is gone; remove the alias or that construct`,
        )
        continue
      }
      const other = claims.get(key)
      if (other) {
        problem(
          `${JSON.stringify(alias)} is also an alias of ${other.construct} ${JSON.stringify(other.logicalId)} (${where(other)}): a former id can move to one construct only; remove it from one of them`,
        )
        continue
      }
      claims.set(key, res)
    }
  }
  const urls = new Map<string, DesiredResource>()
  for (const page of resources.filter((r) => r.kind === 'status-page')) {
    const url = String(page.payload.url)
    const other = urls.get(url)
    if (other) {
      const r = fileOf(page)
      problems.push({
        file: r ? ctx.cwdRel(r.file) : page.file,
        construct: 'StatusPage',
        logicalId: page.logicalId,
        field: 'url',
        message: `"${url}" is also the url of StatusPage "${other.logicalId}" (${other.file}); status page urls must be unique`,
      })
    } else urls.set(url, page)
  }
}

function splitOptions(
  props: Record<string, unknown>,
  add: (field: string | undefined, message: string) => void,
): { options: ResourceOptions; input: Record<string, unknown> } {
  const input: Record<string, unknown> = {}
  const options: ResourceOptions = {}
  for (const key in props) {
    if (!Object.hasOwn(props, key)) continue
    const value = props[key]
    if (!(OPTION_KEYS as readonly string[]).includes(key)) {
      if (value !== undefined) input[key] = value
      continue
    }
    if (value === undefined) continue
    if (key === 'aliases') {
      if (!Array.isArray(value)) add('aliases', `must be an array of logical ids (got ${typeof value})`)
      else {
        value.forEach((a, i) => {
          if (typeof a !== 'string' || !LOGICAL_ID_PATTERN.test(a))
            add(`aliases.${i}`, `must be a logical id of A-Z, a-z, 0-9 and _ - / # . (got ${typeof a === 'string' ? JSON.stringify(a) : typeof a})`)
        })
        options.aliases = value as string[]
      }
    } else if (typeof value !== 'boolean') add(key, `must be a boolean (got ${typeof value})`)
    else options[key as 'protect' | 'retainOnDelete'] = value
  }
  return { options, input }
}

/**
 * Optional check props the API has no `null` for, where `null` in code means "none, not the
 * config's default" (locations, groupId, groupOrder and runtimeId take `null` as it is).
 */
export const NONE_CHECK_FIELDS = ['alertSettings', 'retryStrategy', 'alertChannels', 'alertChannelSubscriptions', 'frequencyOffset'] as const

/**
 * Config defaults under a check's props: tags are merged (defaults first) unless the check says
 * `defaultTags: false`; the rest fill gaps. A prop set to `null` takes no default: the check
 * has none.
 */
export function mergeDefaults(props: Record<string, unknown>, defaults: ResolvedConfig['defaults'], fromDefaults = new Set<string>()): Record<string, unknown> {
  return mergeDefaultsInto({ ...props }, props.defaultTags === false, props.tags, defaults, fromDefaults)
}

/** mergeDefaults on a copy of the props the caller owns (`out`): changed in place and returned. */
function mergeDefaultsInto(
  out: Record<string, unknown>,
  ownTagsOnly: boolean,
  ownTags: unknown,
  defaults: ResolvedConfig['defaults'],
  fromDefaults: Set<string>,
): Record<string, unknown> {
  if ('defaultTags' in out) delete out.defaultTags
  for (const key in defaults) {
    if (!Object.hasOwn(defaults, key)) continue
    const value = (defaults as Record<string, unknown>)[key]
    if (value === undefined) continue
    if (key === 'tags' && Array.isArray(value)) {
      if (ownTagsOnly) continue
      if (Array.isArray(ownTags)) out.tags = mergeTags(value, ownTags)
      else if (ownTags === undefined) {
        out.tags = [...value]
        fromDefaults.add(key)
      }
      continue
    }
    if (out[key] === undefined) {
      out[key] = value
      fromDefaults.add(key)
    }
  }
  for (const key of NONE_CHECK_FIELDS) if (out[key] === null) delete out[key]
  return out
}

/** The default tags, then the check's own that are not among them (each once), without the intermediate copies of a Set of spreads. */
function mergeTags(defaults: readonly unknown[], own: readonly unknown[]): unknown[] {
  if (defaults.length + own.length > 32) return [...new Set([...defaults, ...own])]
  const out: unknown[] = []
  for (const tag of defaults) if (!out.includes(tag)) out.push(tag)
  for (const tag of own) if (!out.includes(tag)) out.push(tag)
  return out
}

/**
 * What a check's group gives it in code (in place): the group's `frequency` when the check sets
 * none; `locations` null when the check names none and the group does, so that the config's
 * default locations do not hide the group's (the service runs the check in the group's).
 */
function groupDefaultsInto(input: Record<string, unknown>): void {
  const group = input.group
  if (!isConstruct(group) || group.__monitorsKind !== 'check-group') return
  const props = (group.props ?? {}) as Record<string, unknown>
  if (input.frequency === undefined && props.frequency !== undefined && props.frequency !== null) input.frequency = props.frequency
  if (input.locations === undefined && Array.isArray(props.locations) && props.locations.length > 0) input.locations = null
}

/** Stands in for a numeric reference while the schema checks the body. */

/** Stands in for a reference already reported as a problem, so the schema does not report it again. */
const UNRESOLVED = 'unresolved-reference'

/**
 * The body with every reference field of the kind's descriptor resolved by `resolve`: where the
 * construct holds another construct (`inCode`, else the API path), the placeholder of its id,
 * shaped as the API wants it (a card's service becomes `{ id }`).
 */
function resolveReferences(
  kind: ResourceKind,
  body: Record<string, unknown>,
  resolve: (value: unknown, field: string, reference: ReferenceField, refPath: string) => unknown,
): Record<string, unknown> {
  let out = body
  for (const reference of descriptorOf(kind).references) {
    const inCode = reference.inCode ?? reference.path
    const sites = sitesOf(out, inCode)
    // most bodies hold no reference: nothing to work out for them
    if (sites.length === 0) continue
    // a top-level prop the API names otherwise (a check's `group`, its `groupId`): the id goes
    // there, the prop goes; null or nothing is no reference
    if (reference.path !== inCode && !reference.path.startsWith(`${inCode}.`)) {
      const value = out[inCode]
      const { [inCode]: _held, ...rest } = out
      const id = value === undefined || value === null ? UNRESOLVED : resolve(value, inCode, reference, reference.path)
      out = id === UNRESOLVED ? rest : { ...rest, [reference.path]: id }
      continue
    }
    // what the API path adds below the construct's place: `cards[].services[].id` after `cards[].services[]` is `id`
    const below = reference.path.slice(inCode.length).split('.').filter(Boolean)
    for (const site of sites) {
      // none (an API check's setupSnippetId: null): nothing to refer to
      if (site.value === null || site.value === undefined) continue
      const refPath = [site.path, ...below].join('.')
      const id = resolve(site.value, site.path, reference, refPath)
      const value = below.reduceRight<unknown>((inner, key) => ({ [key]: inner }), id)
      out = setIn(out, site.path.split('.'), value) as Record<string, unknown>
    }
  }
  return out
}

/** A copy of `node` with the value at `path` replaced, copying only the objects and arrays on the way. */
function setIn(node: unknown, path: readonly string[], value: unknown): unknown {
  if (path.length === 0) return value
  const [head, ...rest] = path
  if (Array.isArray(node)) {
    const copy = [...node]
    copy[Number(head)] = setIn(copy[Number(head)], rest, value)
    return copy
  }
  const copy = { ...(node as Record<string, unknown>) }
  copy[head] = setIn(copy[head], rest, value)
  return copy
}

function resolveRef(
  value: unknown,
  field: string,
  reference: ReferenceField,
  refs: ResourceRef[],
  registrationOf: (construct: AnyConstruct) => Registration | undefined,
  ctx: BuildContext,
  add: (field: string | undefined, message: string) => void,
  refPath = field,
): unknown {
  const accepted = referredKinds(reference)
  const names = accepted.map((k) => descriptorOf(k).construct)
  const construct = names.length === 1 ? names[0] : `channel construct (${names.join(', ')})`
  // a numeric reference (an alert channel's, a check group's, a snippet's id) is validated as a
  // number: its placeholder goes in after (buildResource)
  const numeric = reference.numeric === true || accepted.some((k) => descriptorOf(k).numericId === true)
  const unresolved = numeric ? 0 : UNRESOLVED
  // an id written as a number (a channel not managed in code) stays as it is
  if (reference.numeric && typeof value === 'number') return value
  // a private location's slug written as text (a location not managed in code) stays as it is
  if (reference.text && typeof value === 'string') return value
  if (!isConstruct(value)) {
    add(field, `must be a ${construct} construct of this project, e.g. ${descriptorOf(reference.kind).example} (got ${describe(value)})`)
    return unresolved
  }
  const target = `${constructName(value)} ${JSON.stringify(value.logicalId)}`
  const wanted = value.__monitorsKind
  if (!accepted.includes(wanted)) {
    add(field, `must be a ${construct} (got ${target})`)
    return unresolved
  }
  const registration = registrationOf(value)
  if (!registration) {
    add(field, `refers to ${target}, which is not part of this project: it was not created while the project's check files were loading`)
    return unresolved
  }
  if (registration.outside) {
    add(field, `refers to ${target}, which is not part of this project: it is created in ${ctx.cwdRel(registration.file)}, which checkMatch does not match`)
    return unresolved
  }
  refs.push({ path: refPath, kind: wanted, logicalId: value.logicalId, ...(numeric ? { numeric: true } : {}) })
  return numeric ? 0 : placeholder(wanted, value.logicalId)
}

/** The check constructs, as a message lists them: `a DnsCheck, …, or HeartbeatCheck`. */
const CHECK_CONSTRUCTS = (() => {
  const names = [...CHECK_KINDS].map((kind) => CONSTRUCT_NAMES[kind])
  return `a ${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`
})()

/**
 * A check's `dependsOn`: a list of check constructs of the project (of any check type), each
 * the placeholder of its id until the apply gives it one.
 */
function resolveDependsOn(
  body: Record<string, unknown>,
  resolve: (value: unknown, field: string, wanted: ResourceKind) => unknown,
  add: (field: string | undefined, message: string) => void,
): Record<string, unknown> {
  const list = body.dependsOn
  if (!Array.isArray(list)) {
    add('dependsOn', `must be a list of check constructs of this project, e.g. dependsOn: [databaseCheck] (got ${describe(list)})`)
    return { ...body, dependsOn: [] }
  }
  const ids = list.map((value, i) => {
    const kind = isConstruct(value) ? value.__monitorsKind : undefined
    if (typeof kind === 'string' && isResourceKind(kind) && CHECK_KINDS.has(kind)) return resolve(value, `dependsOn.${i}`, kind)
    add(
      `dependsOn.${i}`,
      `must be a check construct of this project (${CHECK_CONSTRUCTS}), e.g. dependsOn: [databaseCheck] (got ${isConstruct(value) ? `${constructName(value)} ${JSON.stringify(value.logicalId)}` : describe(value)})`,
    )
    return UNRESOLVED
  })
  return { ...body, dependsOn: ids }
}

/** A cycle of `dependsOn` among the project's checks is a problem of each check on it (reported once per cycle). */
function dependencyCycles(resources: DesiredResource[], problems: Problem[]): void {
  const key = (kind: string, logicalId: string) => placeholder(kind as ResourceKind, logicalId)
  const edges = new Map<string, string[]>()
  const byKey = new Map<string, DesiredResource>()
  for (const res of resources) {
    const deps = res.refs.filter((ref) => ref.path.startsWith('dependsOn.')).map((ref) => key(ref.kind, ref.logicalId))
    if (deps.length === 0) continue
    edges.set(key(res.kind, res.logicalId), deps)
    byKey.set(key(res.kind, res.logicalId), res)
  }
  const reported = new Set<string>()
  for (const [start, res] of byKey) {
    if (reported.has(start)) continue
    const cycle = dependencyCycle(start, (id) => edges.get(id) ?? [])
    if (!cycle) continue
    for (const id of cycle) reported.add(id)
    const shown = cycle
      .map((id) => {
        const at = byKey.get(id)
        return at ? `${at.construct} ${JSON.stringify(at.logicalId)}` : id
      })
      .join(' → ')
    const field = `dependsOn.${edges.get(start)!.indexOf(cycle[1])}`
    problems.push({
      file: res.file,
      construct: res.construct,
      logicalId: res.logicalId,
      field,
      message: `makes a cycle of dependencies: ${shown}; a check cannot depend, directly or not, on a check that depends on it: remove one of these dependsOn`,
    })
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null'
  if (value === undefined) return 'nothing'
  if (Array.isArray(value)) return 'an array'
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`
  if (typeof value === 'object') return 'a plain object'
  return typeof value
}

/**
 * Fields of `value` that the schema does not know, at any depth, with a suggestion when close.
 * Walks with one list and builds a field's path only for a field it reports: this runs for every
 * construct of a project, and nearly all of them have no unknown field.
 */
export function unknownFields(schema: z.ZodType, value: unknown, path: string[] = []): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = []
  walkUnknown(schema, value, path, out)
  return out
}

function walkUnknown(schema: z.ZodType, value: unknown, path: string[], out: { path: string; message: string }[]): void {
  let def = schema.def as unknown as Record<string, unknown>
  for (;;) {
    switch (def.type) {
      case 'pipe':
        def = (def.in as z.ZodType).def as unknown as Record<string, unknown>
        continue
      case 'optional':
      case 'nullable':
      case 'default':
      case 'prefault':
      case 'readonly':
      case 'nonoptional':
      case 'catch':
        def = (def.innerType as z.ZodType).def as unknown as Record<string, unknown>
        continue
    }
    break
  }
  if (def.type === 'array') {
    if (!Array.isArray(value)) return
    const element = def.element as z.ZodType
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      if (typeof item !== 'object' || item === null) continue
      path.push(String(i))
      walkUnknown(element, item, path, out)
      path.pop()
    }
    return
  }
  if (def.type !== 'object' || !value || typeof value !== 'object' || Array.isArray(value) || def.catchall) return
  const shape = def.shape as Record<string, z.ZodType>
  const top = path.length === 0
  for (const key in value as Record<string, unknown>) {
    if (!Object.hasOwn(value, key)) continue
    const v = (value as Record<string, unknown>)[key]
    if (Object.hasOwn(shape, key) && (!top || !READ_ONLY_FIELDS.has(key))) {
      if (typeof v === 'object' && v !== null) {
        path.push(key)
        walkUnknown(shape[key], v, path, out)
        path.pop()
      }
    } else if (v !== undefined) {
      const known = Object.keys(shape).filter((k) => !top || !READ_ONLY_FIELDS.has(k))
      const close = closest(key, known)
      out.push({ path: [...path, key].join('.'), message: `is not a known field${close ? ` (did you mean ${close}?)` : ''}` })
    }
  }
}

/**
 * How a construct held in another's props is written in that one's cache key (construct-cache.ts):
 * everything building the other reads of it (resolveRef, groupDefaultsInto): its kind, name and
 * logical id, whether it is registered and part of the project, and a check group's frequency
 * and locations. Undefined (no cache) when its logical id is not a string or those two fields
 * are not plain data. Each construct's token is written once per load (a group is referred to by
 * thousands of checks).
 */
function refTokens(registrationOf: (construct: AnyConstruct) => Registration | undefined): RefToken {
  const tokens = new Map<unknown, string | undefined>()
  return (value) => {
    if (!tokens.has(value)) tokens.set(value, refToken(value as AnyConstruct, registrationOf))
    return tokens.get(value)
  }
}

function refToken(c: AnyConstruct, registrationOf: (construct: AnyConstruct) => Registration | undefined): string | undefined {
  if (typeof c.logicalId !== 'string' || typeof c.__monitorsKind !== 'string') return undefined
  const r = registrationOf(c)
  const where = !r ? 'unregistered' : r.outside ? 'outside' : 'project'
  let group = ''
  if (c.__monitorsKind === 'check-group') {
    const props = (c.props ?? {}) as Record<string, unknown>
    const fields = typeof props === 'object' ? plainJson([props.frequency ?? null, props.locations ?? null], false) : undefined
    if (fields === undefined) return undefined
    group = `,${fields}`
  }
  return `@ref(${JSON.stringify(c.__monitorsKind)},${JSON.stringify(constructName(c))},${JSON.stringify(c.logicalId)},${where}${group})`
}

/** What the resources of one check file are a function of (see constructsKey). */
export interface FileKey {
  /** A hash of the file's path and of its constructs' cache keys, in order. */
  hash: string
  /** The lock key (`kind:logicalId`) of each of its constructs, in order. */
  resources: string[]
  /** The construct cache key of each of its constructs, in the same order. */
  keys: string[]
}

/**
 * A hash of everything the resources built from `registrations` are a function of: the format,
 * this build and version, Node.js, the working directory (problems and lints name files from
 * it), the config written out (`scope`, a hash of these alone), and each construct's file and
 * construct cache key (the constructs it refers to written as refTokens says), by file
 * (`files`, keyed by the file relative to the project root: what a plan of this project kept
 * per file is found by). Undefined when any construct is not plain data (a Date in its props,
 * it reads a file into a field, is outside the project, is of a kind this version does not
 * know) or the config is not plain data: those are never memoized.
 */
export function constructsKey(
  registrations: readonly Registration[],
  scope: { buildId: string | undefined; version: string; configFile: string; environment?: string },
  config: ResolvedConfig,
  rootRel: (abs: string) => string,
): { hash: string; scope: string; files: Map<string, FileKey>; keys: Map<Registration, string> } | undefined {
  if (!scope.buildId) return undefined
  const configText = plainJson(config, true)
  if (configText === undefined) return undefined
  const keys = new Map<Registration, string>()
  const ref = refTokens(registrationLookup(registrations))
  const scopeText = [
    'monitors-constructs-key-2',
    scope.version,
    scope.buildId,
    process.version,
    process.arch,
    process.cwd(),
    scope.configFile,
    scope.environment ?? '',
    configText,
  ].join('\n')
  // thousands of constructs share a few files: each file's parts are found once per run of them
  const byFile = new Map<string, { path: string; resources: string[]; keys: string[] }>()
  let last: { path: string; resources: string[]; keys: string[] } | undefined
  let lastFile: string | undefined
  for (const r of registrations) {
    const c = r.construct
    const kind = c.__monitorsKind
    // a construct's notes are not in its props: a project with notes is never memoized
    if (r.outside || !isResourceKind(kind) || descriptorOf(kind).code || typeof c.logicalId !== 'string' || c.__monitorsNotes !== undefined) return undefined
    const key = constructKey(kind, constructName(c), c.logicalId, c.props, ref)
    if (key === undefined) return undefined
    keys.set(r, key)
    if (r.file !== lastFile) {
      lastFile = r.file
      last = byFile.get(r.file)
      if (!last) byFile.set(r.file, (last = { path: JSON.stringify(rootRel(r.file)), resources: [], keys: [] }))
    }
    last!.keys.push(key)
    last!.resources.push(`${kind}:${c.logicalId}`)
  }
  const files = new Map<string, FileKey>()
  const all = [createHash('sha256').update(scopeText).digest('hex')]
  for (const [abs, { path, resources, keys: fileKeys }] of byFile) {
    // the same bytes as feeding them key by key, in one call: 20,000 calls into the hash cost more than the joined text
    const hash = createHash('sha256')
      .update(fileKeys.length === 0 ? path : `${path}\n${fileKeys.join('\n')}`)
      .digest('hex')
    files.set(rootRel(abs), { hash, resources, keys: fileKeys })
    all.push(hash)
  }
  return { hash: createHash('sha256').update(all.join('\n')).digest('hex'), scope: all[0], files, keys }
}
