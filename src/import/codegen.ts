import type { RemoteRecord, ResourceDescriptor, ResourceKind } from '../resources/types.js'
import {
  CHECK_KINDS,
  CONSTRUCT_NAMES,
  descriptorOf,
  REFERENCED_KINDS,
  referenceSites,
  referredKinds,
  RESOURCE_KINDS,
  RESOURCE_SCHEMAS,
  sitesOf,
} from '../resources/registry.js'
import { normalize } from '../resources/normalize.js'
import { ALERT_CHANNEL_KINDS, subscribesToChannels } from '../resources/kinds/alert-channel.js'
import { stableStringify } from '../resources/stable-json.js'
import { DEFAULTABLE_CHECK_FIELDS, type ResolvedConfig } from '../project/config.js'
import { mergeDefaults } from '../project/desired.js'

/** A remote resource to write as a construct. */
export interface ImportItem {
  kind: ResourceKind
  logicalId: string
  remoteId: string
  record: RemoteRecord
}

/** A logical id from a name: lower case, runs of other characters as one dash. */
export function slug(name: string): string {
  const s = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
  return s || 'imported'
}

/**
 * The props a user would write for a remote record: the normalized record, without read-only
 * fields and without every field equal to what would be filled in anyway (the schema's default,
 * what the construct fills in, or the config's check default). For a check, the props that
 * cancel a config default the remote check does not have are written (`null`, or
 * `defaultTags: false`), so that the code with the defaults merged in is the remote check.
 */
export function propsOf(item: ImportItem, checkDefaults: Record<string, unknown>): Record<string, unknown> {
  const full = withStandIns(item.kind, normalize(item.kind, item.record))
  const props: Record<string, unknown> = {}
  for (const key of Object.keys(full)) {
    if (key === descriptorOf(item.kind).logicalIdField) continue
    const kept = prune(item.kind, full, [key])
    if (kept !== undefined) props[key] = kept
  }
  if (!CHECK_KINDS.has(item.kind)) return props
  return order(withDefaults(item.kind, full, props, checkDefaults))
}

/**
 * The record with a stand-in for each always-secret string the service answers blank, when the
 * schema refuses it blank (a PagerDuty routing key, an Opsgenie API key): without one the
 * schema could not say which fields are at their defaults. The code reads those values from
 * the environment anyway (secretSites).
 */
function withStandIns(kind: ResourceKind, full: Record<string, unknown>): Record<string, unknown> {
  if (RESOURCE_SCHEMAS[kind].safeParse(full).success) return full
  let out: Record<string, unknown> | undefined
  for (const pattern of descriptorOf(kind).secrets.arrays) {
    for (const site of sitesOf(full, pattern)) {
      if (site.value !== '') continue
      out ??= structuredClone(full)
      setPath(out, site.path.split('.'), 'secret')
    }
  }
  return out && RESOURCE_SCHEMAS[kind].safeParse(out).success ? out : full
}

/** What the code of a check gives once the construct and the config's defaults filled it in. */
function asLoaded(kind: ResourceKind, props: Record<string, unknown>, defaults: Record<string, unknown>): Record<string, unknown> {
  return normalize(kind, mergeDefaults(constructFills(kind, props), defaults as ResolvedConfig['defaults']))
}

/** Adjusts a check's props to the config's defaults: left out where the default gives the remote value, written (or cancelled) where it does not. */
function withDefaults(
  kind: ResourceKind,
  full: Record<string, unknown>,
  base: Record<string, unknown>,
  defaults: Record<string, unknown>,
): Record<string, unknown> {
  const props = { ...base }
  const same = (a: unknown, b: unknown) => stableStringify(a) === stableStringify(b)
  for (const key of DEFAULTABLE_CHECK_FIELDS) {
    if (defaults[key] === undefined) continue
    if (key === 'tags') {
      const fromDefaults = [...new Set(defaults.tags as string[])]
      const remote = (full.tags as string[] | undefined) ?? []
      delete props.tags
      if (fromDefaults.every((t) => remote.includes(t))) {
        const own = remote.filter((t) => !fromDefaults.includes(t))
        if (own.length > 0) props.tags = own
      } else {
        props.defaultTags = false
        if (remote.length > 0) props.tags = remote
      }
      continue
    }
    const { [key]: _left, ...without } = props
    if (same(asLoaded(kind, without, defaults)[key], full[key])) {
      delete props[key]
      continue
    }
    props[key] = full[key] === undefined ? null : (base[key] ?? full[key])
  }
  // whatever the defaults are: every field that still differs is written as the remote has it
  const loaded = asLoaded(kind, props, defaults)
  for (const key of new Set([...Object.keys(loaded), ...Object.keys(full)])) {
    if (same(loaded[key], full[key])) continue
    if (key === 'tags') props.defaultTags = false
    props[key] = full[key] === undefined ? null : full[key]
  }
  return props
}

/** A check's props in the order a user writes them: what it does first, `defaultTags` before `tags`. */
const CHECK_ORDER = ['name', 'request', 'frequency', 'locations', 'defaultTags', 'tags', ...DEFAULTABLE_CHECK_FIELDS]

function order(props: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of CHECK_ORDER) if (key in props) out[key] = props[key]
  for (const [key, value] of Object.entries(props)) if (!(key in out)) out[key] = value
  return out
}

/** Fields a construct fills in itself (the descriptor's filledByConstruct: the ICMP check's `heartbeat` and `script`). */
function constructFills(kind: ResourceKind, value: Record<string, unknown>): Record<string, unknown> {
  const fills = Object.entries(descriptorOf(kind).filledByConstruct)
  if (fills.length === 0) return value
  const out = { ...value }
  for (const [key, fill] of fills) out[key] = value[key] ?? structuredClone(fill)
  return out
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The value at a path of object keys and array indices (`alertChannels.webhook.0.headers`). */
function getPath(value: unknown, path: readonly string[]): unknown {
  let node = value
  for (const part of path) node = isPlainObject(node) ? node[part] : Array.isArray(node) && /^\d+$/.test(part) ? node[Number(part)] : undefined
  return node
}

function withoutPath(value: Record<string, unknown>, path: readonly string[]): Record<string, unknown> {
  const copy = structuredClone(value)
  const parent = getPath(copy, path.slice(0, -1))
  if (isPlainObject(parent)) delete parent[path[path.length - 1]]
  return copy
}

/**
 * The value at `path` as a user would write it, or undefined when leaving it out gives the same
 * result (the schema fills it in). Objects are pruned field by field.
 */
function prune(kind: ResourceKind, full: Record<string, unknown>, path: readonly string[]): unknown {
  const value = getPath(full, path)
  const parsed = RESOURCE_SCHEMAS[kind].safeParse(constructFills(kind, withoutPath(full, path)))
  const filled = parsed.success ? getPath(normalize(kind, parsed.data as Record<string, unknown>), path) : undefined
  if (stableStringify(filled) === stableStringify(value)) return undefined
  if (!isPlainObject(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    const kept = prune(kind, full, [...path, key])
    if (kept !== undefined) out[key] = kept
  }
  // an object the schema requires stays, even when all its fields are defaults
  return out
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  const parent = getPath(target, path.slice(0, -1))
  const last = path[path.length - 1]
  if (isPlainObject(parent)) parent[last] = value
  else if (Array.isArray(parent) && /^\d+$/.test(last)) parent[Number(last)] = value
}

/**
 * A check's subscriptions to channels imported with it written as the code writes them:
 * `alertChannels: [oncall, …]`, the inline channels (if any) last in the array. A subscription
 * that is not active, or to a channel not imported (already in code), stays by id.
 */
function channelsAsConstructs(props: Record<string, unknown>, vars: ReadonlyMap<string, string>): void {
  const list = props.alertChannelSubscriptions
  if (!Array.isArray(list)) return
  const constructs: unknown[] = []
  const kept = list.filter((s) => {
    const id = isPlainObject(s) ? String(s.alertChannelId) : undefined
    // the variables are by kind and id: a channel's id is one of the channel kinds'
    const name = id === undefined ? undefined : ALERT_CHANNEL_KINDS.map((kind) => vars.get(`${kind}:${id}`)).find((v) => v !== undefined)
    if (name === undefined || (s as { activated?: unknown }).activated === false) return true
    constructs.push({ __code: name })
    return false
  })
  if (constructs.length === 0) return
  if (kept.length > 0) props.alertChannelSubscriptions = kept
  else delete props.alertChannelSubscriptions
  const inline = props.alertChannels
  props.alertChannels = isPlainObject(inline) && Object.keys(inline).length > 0 ? [...constructs, inline] : constructs
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** A JavaScript literal, 2-space indent, single quotes; `refs` maps remote service ids to variable names. */
function literal(value: unknown, indent: string, ref?: (value: unknown) => string | undefined): string {
  const r = ref?.(value)
  if (r) return r
  if (typeof value === 'string') return quote(value)
  if (value === null || typeof value !== 'object') return String(value)
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    const items = value.map((v) => literal(v, inner, ref))
    const flat = `[${items.join(', ')}]`
    if (flat.length <= 80 && !flat.includes('\n')) return flat
    return `[\n${items.map((i) => `${inner}${i},`).join('\n')}\n${indent}]`
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined)
  if (entries.length === 0) return '{}'
  const parts = entries.map(([k, v]) => `${IDENT.test(k) ? k : quote(k)}: ${literal(v, inner, ref)}`)
  const flat = `{ ${parts.join(', ')} }`
  if (flat.length <= 80 && !flat.includes('\n')) return flat
  return `{\n${parts.map((p) => `${inner}${p},`).join('\n')}\n${indent}}`
}

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`
}

function variableName(logicalId: string, taken: Set<string>): string {
  let base = logicalId.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : '')).replace(/^[^A-Za-z_$]+/, '')
  if (!base) base = 'service'
  base = base[0].toLowerCase() + base.slice(1)
  let name = base
  for (let i = 2; taken.has(name); i++) name = `${base}${i}`
  taken.add(name)
  return name
}

/** A secret value the generated code reads from the environment, since the service never returns it. */
export interface ImportedSecret {
  /** the environment variable the code reads */
  name: string
  kind: ResourceKind
  logicalId: string
  /** the field, as plans name it (`environmentVariables[TOKEN].value`, `alertChannels.slack[0].url`) */
  field: string
  /** where the value goes in the normalized remote record (object keys and array indices) */
  steps: string[]
}

/** What `monitors import` writes: the file's text, and the environment variables it reads secrets from. */
export interface GeneratedImport {
  text: string
  secrets: ImportedSecret[]
  /** The scripts of browser and multi-step checks and the projects of suites, to write beside the code: paths relative to the project; a binary file's content in base64 (`encoding`). */
  files: Array<{ path: string; content: string; encoding?: 'base64' }>
}

/** Where the generated file goes, for the entrypoints of the scripts it refers to. */
export interface ScriptPlacement {
  /** the folder of the generated check file, relative to the project (posix; '' for the project's own) */
  checkFileDir: string
}

const SCRIPT_KINDS = new Set<ResourceKind>(['browser-check', 'multistep-check'])

/**
 * A script check's props as code: its script written back as files (`scriptPath` and
 * `dependencies`, at their paths in the project) and `code: { entrypoint }` relative to the
 * generated file; an inline script (no scriptPath) stays inline, `code: { content }`.
 */
function scriptAsCode(logicalId: string, props: Record<string, unknown>, placement: ScriptPlacement, files: GeneratedImport['files']): void {
  const script = props.script
  if (typeof script !== 'string') return
  const scriptPath = typeof props.scriptPath === 'string' ? props.scriptPath : null
  const dependencies = Array.isArray(props.dependencies) ? (props.dependencies as Array<{ path: string; content: string }>) : []
  delete props.script
  delete props.scriptPath
  delete props.dependencies
  const rest = { ...props }
  for (const key of Object.keys(props)) delete props[key]
  if (scriptPath === null) {
    Object.assign(props, { name: rest.name, code: { content: script } }, rest)
    return
  }
  let own = [{ path: scriptPath, content: script }, ...dependencies.map((d) => ({ path: d.path, content: d.content }))]
  // another imported check has a different file at one of these paths: this check's files go
  // together into a folder of its own (their relative imports hold); its next plan updates the paths
  const clash = own.some((f) => files.some((g) => g.path === f.path && g.content !== f.content))
  if (clash) own = own.map((f) => ({ ...f, path: `${slug(logicalId)}/${f.path}` }))
  for (const f of own) if (!files.some((g) => g.path === f.path)) files.push(f)
  const from = placement.checkFileDir === '' ? [] : placement.checkFileDir.split('/')
  const to = own[0].path.split('/')
  let common = 0
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++
  const relative = [...from.slice(common).map(() => '..'), ...to.slice(common)].join('/')
  Object.assign(props, { name: rest.name, code: { entrypoint: relative.startsWith('.') ? relative : `./${relative}` } }, rest)
}

/**
 * A Playwright check suite's props as code: its project written back into a folder of its own
 * (`<logical id>/`, its paths under it), `playwrightConfigPath` relative to the generated file,
 * and `include: ['**\/*']` so that the folder's every file is the suite's again (a file the
 * config finds no test in, a fixture, stays in it); `testCommand` is the service's answer.
 */
function suiteAsCode(logicalId: string, props: Record<string, unknown>, placement: ScriptPlacement, files: GeneratedImport['files']): void {
  if (!Array.isArray(props.files)) return
  const own = (props.files as Array<{ path: string; content: string; encoding?: 'base64' }>).map((f) => ({ ...f, path: `${slug(logicalId)}/${f.path}` }))
  const config = `${slug(logicalId)}/${typeof props.playwrightConfigPath === 'string' ? props.playwrightConfigPath : 'playwright.config.ts'}`
  for (const f of own) if (!files.some((g) => g.path === f.path)) files.push(f)
  const rest = { ...props }
  delete rest.files
  delete rest.testCommand
  delete rest.playwrightConfigPath
  for (const key of Object.keys(props)) delete props[key]
  const from = placement.checkFileDir === '' ? [] : placement.checkFileDir.split('/')
  const to = config.split('/')
  let common = 0
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++
  const relative = [...from.slice(common).map(() => '..'), ...to.slice(common)].join('/')
  Object.assign(props, { name: rest.name, playwrightConfigPath: relative.startsWith('.') ? relative : `./${relative}`, include: ['**/*'] }, rest)
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * The secret sites of a remote record (normalized): a secret variable's value, and every value
 * the service masks in a check (the descriptor's `secrets.arrays`: secret items of keyed arrays,
 * always-secret strings), each with the environment variable the code reads it from. `taken`
 * keeps the names unique in one file.
 */
export function secretSites(
  kind: ResourceKind,
  logicalId: string,
  full: Record<string, unknown>,
  taken: Set<string>,
  descriptor: Pick<ResourceDescriptor, 'secrets'> = descriptorOf(kind),
): ImportedSecret[] {
  const out: ImportedSecret[] = []
  const name = (...parts: string[]) => {
    const base = parts
      .join('_')
      .toUpperCase()
      .replace(/[^A-Z0-9_]+/g, '_')
      .replace(/^([0-9])/, '_$1')
    let unique = base
    for (let i = 2; taken.has(unique); i++) unique = `${base}_${i}`
    taken.add(unique)
    return unique
  }
  if (descriptor.secrets.self && full.secret === true) {
    const envName = ENV_NAME.test(logicalId) ? logicalId : 'SECRET_VALUE'
    out.push({ name: name(envName), kind, logicalId, field: 'value', steps: ['value'] })
    return out
  }
  for (const pattern of descriptor.secrets.arrays) {
    for (const site of sitesOf(full, pattern)) {
      const steps = site.path.split('.')
      // the names of the keyed items on the way (a webhook's name), for the variable's name and the field's
      const context: string[] = []
      let field = ''
      steps.forEach((step, i) => {
        if (/^\d+$/.test(step)) {
          const item = getPath(full, steps.slice(0, i + 1))
          const key = isPlainObject(item) && typeof item.name === 'string' ? item.name : undefined
          if (key !== undefined) context.push(key)
          field += `[${key ?? step}]`
        } else field += field ? `.${step}` : step
      })
      if (typeof site.value === 'string') {
        // an always-secret string: the basic auth password, a Slack URL
        const last = steps[steps.length - 1]
        const parts = steps[0] === 'alertChannels' ? [logicalId, ...steps.filter((s) => s !== 'alertChannels' && !/^\d+$/.test(s))] : [logicalId, last]
        const index = Number(steps[steps.length - 2])
        if (steps[0] === 'alertChannels' && index > 0) parts.push(String(index + 1))
        out.push({ name: name(...parts), kind, logicalId, field, steps })
      } else if (Array.isArray(site.value)) {
        site.value.forEach((v, i) => {
          if (!isPlainObject(v) || v.secret !== true) return
          out.push({
            name: name(logicalId, ...context, String(v.key)),
            kind,
            logicalId,
            field: `${field}[${String(v.key)}].value`,
            steps: [...steps, String(i), 'value'],
          })
        })
      }
    }
  }
  return out
}

/** The check ids a remote check depends on (`dependsOn`). */
export function dependsOnIds(record: Record<string, unknown>): string[] {
  return Array.isArray(record.dependsOn) ? record.dependsOn.filter((id): id is string => typeof id === 'string') : []
}

/** The items in their order, but each check after the imported checks it depends on (the service refuses cycles). */
function dependenciesFirst<T extends { kind: ResourceKind; remoteId: string; record: Record<string, unknown> }>(items: readonly T[]): T[] {
  const checks = new Map(items.filter((i) => CHECK_KINDS.has(i.kind)).map((i) => [i.remoteId, i]))
  const out: T[] = []
  const placed = new Set<T>()
  const place = (item: T, path: Set<T>) => {
    if (placed.has(item) || path.has(item)) return
    path.add(item)
    for (const id of dependsOnIds(item.record)) {
      const dependency = checks.get(id)
      if (dependency) place(dependency, path)
    }
    placed.add(item)
    out.push(item)
  }
  for (const item of items) place(item, new Set())
  return out
}

/**
 * A construct already in code (recorded in the lock, declared and exported by a check file) that
 * an imported resource refers to: the import's code imports it from that file, so that the
 * reference is to the construct, never to the id it has on the service read.
 */
export interface CodeConstruct {
  kind: ResourceKind
  /** its id on the service read: what the imported records hold */
  remoteId: string
  logicalId: string
  /** the check file exporting it, relative to the project (posix) */
  file: string
  /** the export's name; `default` for a default export */
  name: string
}

/** How one check file imports another (posix, from the folder of the importing file): `./groups.check.js`, `../shared/channels.check.js`. */
export function importSpecifier(fromDir: string, file: string): string {
  const from = fromDir === '' ? [] : fromDir.split('/')
  const to = file.split('/')
  let common = 0
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++
  const relative = [...from.slice(common).map(() => '..'), ...to.slice(common)].join('/')
  // TypeScript's module resolution (NodeNext) names the emitted file: `.ts` as `.js`
  const emitted = relative.replace(/\.(m|c)?tsx?$/, (_m, mc: string | undefined) => `.${mc ?? ''}js`)
  return emitted.startsWith('.') ? emitted : `./${emitted}`
}

/**
 * The import declarations of the constructs in code the imported ones refer to, one per file,
 * each construct under its exported name (another name when that one is taken); fills the
 * variables references are written with.
 */
function importsOfCode(
  inCode: readonly CodeConstruct[],
  placement: ScriptPlacement,
  taken: Set<string>,
  serviceVar: Map<string, string>,
  checkVar: Map<string, string>,
): string {
  if (inCode.length === 0) return ''
  const byFile = new Map<string, Array<{ construct: CodeConstruct; local: string }>>()
  for (const construct of [...inCode].sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.name < b.name ? -1 : 1))) {
    const local =
      construct.name !== 'default' && IDENT.test(construct.name) && !taken.has(construct.name)
        ? construct.name
        : variableName(construct.name === 'default' ? construct.logicalId : construct.name, taken)
    taken.add(local)
    if (REFERENCED_KINDS.includes(construct.kind)) serviceVar.set(`${construct.kind}:${construct.remoteId}`, local)
    if (CHECK_KINDS.has(construct.kind)) checkVar.set(construct.remoteId, local)
    const list = byFile.get(construct.file) ?? []
    if (!list.some((e) => e.construct.name === construct.name)) list.push({ construct, local })
    byFile.set(construct.file, list)
  }
  const lines = [...byFile].map(([file, list]) => {
    const named = list.filter((e) => e.construct.name !== 'default').map((e) => (e.local === e.construct.name ? e.local : `${e.construct.name} as ${e.local}`))
    const byDefault = list.find((e) => e.construct.name === 'default')?.local
    const clause = [byDefault, named.length > 0 ? `{ ${named.join(', ')} }` : undefined].filter(Boolean).join(', ')
    return `import ${clause} from '${importSpecifier(placement.checkFileDir, file)}'\n`
  })
  return `// constructs already in code that the imported ones refer to\n${lines.join('')}`
}

/**
 * A check file declaring one construct per item, services first (as variables, so that status
 * pages and checks refer to them), formatted as a user would write it.
 */
export function generateChecksFile(items: readonly ImportItem[], checkDefaults: Record<string, unknown>, packageName = 'monitors-as-code'): string {
  return generateImport(items, checkDefaults, packageName).text
}

/**
 * The same, with the secrets the code reads from the environment: the service never returns a
 * secret value, so the file names an environment variable for each (`process.env.NAME ?? ''`).
 */
export function generateImport(
  items: readonly ImportItem[],
  checkDefaults: Record<string, unknown>,
  packageName = 'monitors-as-code',
  placement: ScriptPlacement = { checkFileDir: '' },
  inCode: readonly CodeConstruct[] = [],
): GeneratedImport {
  const order = RESOURCE_KINDS
  const sorted = [...items].sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind) || (a.logicalId < b.logicalId ? -1 : 1))
  const taken = new Set<string>()
  const serviceVar = new Map<string, string>()
  const checkVar = new Map<string, string>()
  // constructs already in code the imported ones refer to: imported from their check files, first (they keep their names)
  const codeImports = importsOfCode(inCode, placement, taken, serviceVar, checkVar)
  // by kind and remote id (a snippet's id is a number, sent as one)
  for (const item of sorted) if (REFERENCED_KINDS.includes(item.kind)) serviceVar.set(`${item.kind}:${item.remoteId}`, variableName(item.logicalId, taken))
  const ref = (value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 1 && typeof (value as { id?: unknown }).id === 'string'
      ? serviceVar.get(`status-page-service:${(value as { id: string }).id}`)
      : undefined

  // checks other imported checks depend on (dependsOn): variables, declared before their dependents
  const dependedOn = new Set(sorted.flatMap((item) => dependsOnIds(item.record)))
  for (const item of sorted) if (CHECK_KINDS.has(item.kind) && dependedOn.has(item.remoteId)) checkVar.set(item.remoteId, variableName(item.logicalId, taken))

  const used = new Set<string>()
  const blocks: string[] = []
  const secrets: ImportedSecret[] = []
  const envNames = new Set<string>()
  const files: GeneratedImport['files'] = []
  for (const item of dependenciesFirst(sorted)) {
    const construct = CONSTRUCT_NAMES[item.kind]
    used.add(construct)
    const props = propsOf(item, checkDefaults)
    if (SCRIPT_KINDS.has(item.kind)) scriptAsCode(item.logicalId, props, placement, files)
    if (item.kind === 'playwright-check') suiteAsCode(item.logicalId, props, placement, files)
    // secrets the service never returns: read from the environment
    const sites = secretSites(item.kind, item.logicalId, normalize(item.kind, item.record), envNames)
    let comment = ''
    const fromEnv: string[] = []
    for (const site of sites) {
      if (getPath(props, site.steps) === undefined) continue
      setPath(props, site.steps, { __code: `process.env.${site.name} ?? ''` })
      fromEnv.push(site.name)
      secrets.push(site)
    }
    if (descriptorOf(item.kind).secrets.self && fromEnv.length > 0) {
      comment = `// The service never returns a secret's value: it is read from the environment here.\n`
    } else if (fromEnv.length > 0) {
      comment = `// The service never returns secret values: they are read from the environment (${fromEnv.join(', ')}).\n`
    }
    if (subscribesToChannels(descriptorOf(item.kind))) channelsAsConstructs(props, serviceVar)
    if (Array.isArray(props.dependsOn)) props.dependsOn = props.dependsOn.map((id) => (checkVar.has(String(id)) ? { __code: checkVar.get(String(id))! } : id))
    // a reference the construct holds as the referenced construct itself (a check's triggerIncident.serviceId)
    for (const site of referenceSites(item.kind, props)) {
      if (typeof site.value !== 'string' && typeof site.value !== 'number') continue
      // the variables are by kind and id: a subscription's channel is one of the channel kinds'
      const key = referredKinds(site.field)
        .map((kind) => `${kind}:${String(site.value)}`)
        .find((k) => serviceVar.has(k))
      if (key === undefined) continue
      // a reference the construct holds under another name (a check's group, its groupId in the API)
      const inCode = site.field.inCode
      if (inCode && site.field.path !== inCode && !site.field.path.startsWith(`${inCode}.`)) {
        delete props[site.path]
        props[inCode] = { __code: serviceVar.get(key)! }
        continue
      }
      if (site.field.inCode) continue
      setPath(props, site.path.split('.'), { __code: serviceVar.get(key)! })
    }
    const shape = descriptorOf(item.kind).codeShape
    const written = shape ? shape.fromPayload(props) : props
    const body = literal(written, '', (v) => ref(v) ?? (v && typeof v === 'object' && '__code' in v ? String((v as { __code: string }).__code) : undefined))
    const make = `new ${construct}(${quote(item.logicalId)}, ${body})`
    const prefix = REFERENCED_KINDS.includes(item.kind)
      ? `const ${serviceVar.get(`${item.kind}:${item.remoteId}`)} = `
      : checkVar.has(item.remoteId) && CHECK_KINDS.has(item.kind)
        ? `const ${checkVar.get(item.remoteId)} = `
        : ''
    blocks.push(`${comment}${prefix}${make}\n`)
  }
  const names = [...used].sort()
  return {
    text: `// Imported from the Monitoring API by monitors import.\nimport { ${names.join(', ')} } from '${packageName}'\n${codeImports}\n${blocks.join('\n')}`,
    secrets,
    files,
  }
}
