import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import * as constructs from '../constructs/index.js'
import { DESCRIPTORS, RESOURCE_KINDS } from '../src/resources/registry.js'
import { CHECK_TYPE_TABLE, SERVICE_CHECK_TYPES, type CheckTypeTable, type ServiceCheckType } from '../src/schema/check-types.js'
import { CHECK_TYPES, type CheckType } from '../src/schema/enums.js'
import { checkListQuerySchema, metricsQuerySchema } from '../src/schema/index.js'
import { jsonBodyTableNames } from '../src/server/store/json-body-rows.js'

/**
 * The import rules of docs/architecture.md, checked on every .ts file under src/ and
 * constructs/. A folder is a layer; each layer lists the layers it may import. Everything
 * else is a violation, printed as `file: import 'specifier' (why)`.
 */

const root = resolve(import.meta.dirname, '..')

type Layer = 'constructs' | 'schema' | 'resources' | 'state' | 'project' | 'api' | 'plan' | 'apply' | 'import' | 'runner' | 'agent' | 'server' | 'cli'

/** What each layer may import besides itself. `type:` means through `import type` only. */
const ALLOWED: Record<Layer, readonly string[]> = {
  schema: [],
  resources: ['schema'],
  constructs: ['type:resources/types', 'schema'],
  state: ['resources'],
  project: ['resources', 'schema', 'constructs'],
  api: ['resources'],
  plan: ['state', 'resources', 'api', 'schema'],
  apply: ['type:plan/types', 'state', 'resources', 'api'],
  import: ['resources', 'api', 'project'],
  runner: ['schema'],
  agent: ['api', 'runner', 'schema'],
  server: ['schema', 'runner'],
  cli: ['constructs', 'schema', 'resources', 'state', 'project', 'api', 'plan', 'apply', 'import', 'runner', 'agent', 'server'],
}

/** Packages only some folders may use. */
const PACKAGE_OWNERS: Record<string, readonly string[]> = {
  'better-sqlite3': ['src/server/store/sqlite/'],
  pg: ['src/server/store/postgres/'],
}

/**
 * The parts of src/server/ and what of src/server/ each may import (docs/architecture.md, "Import
 * rules inside src/server/"): each folder; `keys.ts`; the shared modules at its top
 * (`src/server/*.ts` but `keys.ts`, `app.ts` and `index.ts`); and `app.ts` and `index.ts`, which
 * wire the rest. Every folder may also import `keys.ts` and the shared modules; the shared
 * modules `keys.ts`, `store/` and each other; `app.ts` and `index.ts` everything. The rules are
 * one direction each: the table is acyclic, and so must the imports be between the parts
 * (each root file a part of its own).
 */
const SERVER_FOLDERS_ALLOWED = {
  store: [],
  'status-pages': ['store'],
  alerts: ['store', 'status-pages'],
  results: ['store', 'alerts'],
  heartbeats: ['store', 'results'],
  scheduler: ['store', 'results', 'heartbeats'],
  routes: ['store', 'status-pages', 'alerts', 'results', 'heartbeats', 'scheduler'],
  web: ['store', 'status-pages', 'alerts', 'results'],
} as const satisfies Record<string, readonly string[]>
type ServerFolder = keyof typeof SERVER_FOLDERS_ALLOWED
type ServerPart = ServerFolder | 'keys.ts' | 'shared' | 'wiring'

/** The part of src/server/ a file is in, or undefined outside src/server/. */
function serverPartOf(file: string): ServerPart | string | undefined {
  const m = /^src\/server\/(?:([^/]+)\/|([^/]+\.ts)$)/.exec(file)
  if (!m) return undefined
  if (m[2]) return m[2] === 'keys.ts' ? 'keys.ts' : m[2] === 'app.ts' || m[2] === 'index.ts' ? 'wiring' : 'shared'
  return m[1]
}

/** What of src/server/ a part may import besides itself. */
function serverAllowed(part: ServerPart | string): readonly string[] {
  if (part === 'wiring') return [...Object.keys(SERVER_FOLDERS_ALLOWED), 'keys.ts', 'shared', 'wiring']
  if (part === 'keys.ts') return []
  if (part === 'store') return ['keys.ts']
  if (part === 'shared') return ['keys.ts', 'store']
  const folders: readonly string[] | undefined = (SERVER_FOLDERS_ALLOWED as Record<string, readonly string[]>)[part]
  return folders ? [...folders, 'keys.ts', 'shared'] : []
}

/** The import of one part of src/server/ by another against the rules, or undefined when allowed. */
function serverViolation(file: string, target: string): string | undefined {
  const from = serverPartOf(file)
  const to = serverPartOf(target)
  if (from === undefined || to === undefined || from === to) return undefined
  if (target === 'src/server/index.ts' || (target === 'src/server/app.ts' && file !== 'src/server/index.ts'))
    return 'app.ts and index.ts wire the server: nothing in src/server/ imports them'
  if (serverAllowed(from).includes(to)) return undefined
  const allowed = serverAllowed(from).map((p) => (p === 'shared' ? 'the shared modules' : p === 'keys.ts' ? p : `${p}/`))
  const name = from === 'shared' ? 'a shared module of src/server/' : from === 'keys.ts' ? 'src/server/keys.ts' : `src/server/${from}/`
  return `${name} may import ${allowed.length > 0 ? allowed.join(', ') : 'nothing of src/server/'}; see docs/architecture.md`
}

/**
 * The cycles between the parts of src/server/ (a folder, or a file at its top), from their
 * imports: each the parts that reach each other (`alerts/ ⇄ web/`), or none.
 */
function serverCycles(imports: readonly ImportRecord[]): string[] {
  const unit = (file: string) => (/^src\/server\/[^/]+\//.test(file) ? `${/^src\/server\/([^/]+)\//.exec(file)![1]}/` : file.replace(/^src\/server\//, ''))
  const edges = new Map<string, Set<string>>()
  for (const r of imports) {
    if (!r.target || !r.file.startsWith('src/server/') || !r.target.startsWith('src/server/')) continue
    const [a, b] = [unit(r.file), unit(r.target)]
    if (a === b) continue
    if (!edges.has(a)) edges.set(a, new Set())
    edges.get(a)!.add(b)
  }
  // Tarjan's strongly connected components: every one of two parts or more is a cycle
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const out: string[] = []
  const visit = (v: string) => {
    index.set(v, index.size)
    low.set(v, index.get(v)!)
    stack.push(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) !== index.get(v)) return
    const component: string[] = []
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) component.push(w)
    if (component.length > 1) out.push(component.sort().join(' ⇄ '))
  }
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v)
  return out
}

/** SQL in a string literal: only the store may speak it. */
const SQL =
  /^\s*(SELECT\s[\s\S]*\sFROM\s|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX|UNIQUE\s+INDEX)\s|ALTER\s+TABLE\s|PRAGMA\s)/i

interface ImportRecord {
  /** File, relative to the repository root. */
  file: string
  specifier: string
  /** Resolved target relative to the root for relative imports; undefined for packages. */
  target?: string
  typeOnly: boolean
}

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) walk(path, out)
    else if (entry.name.endsWith('.ts')) out.push(path)
  }
  return out
}

function importsOf(file: string, text: string): { imports: ImportRecord[]; strings: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const imports: ImportRecord[] = []
  const strings: string[] = []
  const add = (specifier: string, typeOnly: boolean) => {
    const target = specifier.startsWith('.') ? relative(root, resolve(dirname(join(root, file)), specifier)).replace(/\.js$/, '.ts') : undefined
    imports.push({ file, specifier, target, typeOnly })
  }
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      const allTypes =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            !!clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)))
      add(node.moduleSpecifier.text, allTypes)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly)
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text, false)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true)
    } else if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      strings.push(node.text)
    } else if (ts.isTemplateExpression(node)) {
      strings.push(node.head.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return { imports, strings }
}

/** The layer of a file (relative to the root), or undefined outside src/ and constructs/. */
function layerOf(file: string): Layer | undefined {
  if (file.startsWith('constructs/')) return 'constructs'
  const m = /^src\/([^/]+)\//.exec(file)
  return m && m[1] in ALLOWED ? (m[1] as Layer) : undefined
}

/** Every import of `imports` against the rules: one line per violation. */
function violations(imports: readonly ImportRecord[], strings: ReadonlyMap<string, readonly string[]> = new Map()): string[] {
  const out: string[] = []
  const bad = (r: ImportRecord, why: string) => out.push(`${r.file}: import '${r.specifier}' (${why})`)
  for (const r of imports) {
    const from = layerOf(r.file)
    if (!from) continue
    if (!r.target) {
      const owners = PACKAGE_OWNERS[r.specifier]
      if (owners && !owners.some((o) => r.file.startsWith(o))) bad(r, `only ${owners.join(', ')} may use ${r.specifier}`)
      continue
    }
    const to = layerOf(r.target)
    if (!to || to === from) {
      // inside plan: the plan is data; its renderers read it, the computation never reads them
      if (
        from === 'plan' &&
        r.target.startsWith('src/plan/render/') &&
        !r.file.startsWith('src/plan/render/') &&
        r.file !== 'src/plan/index.ts' &&
        r.file !== 'src/plan/saved.ts'
      ) {
        bad(r, 'the plan is data: only src/plan/render/, its index and saved plans use the renderers')
      }
      // inside the server: routes, results and the scheduler reach the store through its interface only
      if (from === 'server' && r.target.startsWith('src/server/store/sqlite/') && !r.file.startsWith('src/server/store/') && r.file !== 'src/server/index.ts') {
        bad(r, 'only the store and src/server/index.ts may use the SQLite store; go through the Store interface (src/server/store/index.ts)')
      }
      if (
        from === 'server' &&
        r.target.startsWith('src/server/store/postgres/') &&
        !r.file.startsWith('src/server/store/') &&
        r.file !== 'src/server/index.ts'
      ) {
        bad(r, 'only the store and src/server/index.ts may use the PostgreSQL store; go through the Store interface (src/server/store/index.ts)')
      }
      const inServer = from === 'server' ? serverViolation(r.file, r.target) : undefined
      if (inServer) bad(r, inServer)
      continue
    }
    if (to === 'cli') {
      bad(r, 'nothing imports src/cli')
      continue
    }
    const path = r.target.replace(/^src\//, '').replace(/\.ts$/, '')
    const allowed = ALLOWED[from].some((rule) => {
      const typeRule = rule.startsWith('type:')
      const target = typeRule ? rule.slice(5) : rule
      const matches = path === target || path.startsWith(`${target}/`) || (to === 'constructs' && target === 'constructs')
      return matches && (!typeRule || r.typeOnly)
    })
    if (!allowed) {
      const rules = ALLOWED[from].length > 0 ? ALLOWED[from].join(', ') : 'nothing outside itself'
      bad(r, `${from} may import ${rules}; see docs/architecture.md`)
    }
  }
  for (const [file, texts] of strings) {
    if (file.startsWith('src/server/store/')) continue
    for (const text of texts) if (SQL.test(text)) out.push(`${file}: SQL outside src/server/store: ${JSON.stringify(text.trim().slice(0, 60))}`)
  }
  return out
}

/** The longest a function may be, in lines from its first token to its last (issue 23). */
const MAX_FUNCTION_LINES = 100

/**
 * Functions still over the limit, by `file name`: they are being split on another branch. Each
 * must still exceed the limit (the test fails once one no longer does, so the list only shrinks).
 */
const LONG_FUNCTIONS_ALLOWED: readonly string[] = []

interface LongFunction {
  /** `file name`, as LONG_FUNCTIONS_ALLOWED names it */
  key: string
  /** `file:line name (n lines)` */
  text: string
}

/** A function's name: its own, else the variable, property or class member it is assigned to. */
function functionName(node: ts.FunctionLikeDeclaration): string | undefined {
  if (ts.isConstructorDeclaration(node)) return 'constructor'
  if (node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) || ts.isPrivateIdentifier(node.name))) return node.name.text
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && ts.isIdentifier(parent.name))
    return parent.name.text
  return undefined
}

/** Every function (declaration, method, accessor, arrow or function expression) of `text` longer than `max` lines. */
function longFunctions(file: string, text: string, max = MAX_FUNCTION_LINES): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const out: LongFunction[] = []
  const visit = (node: ts.Node, enclosing: string | undefined) => {
    let inner = enclosing
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const fn = node as ts.FunctionLikeDeclaration
      const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line
      const own = functionName(fn)
      const name = own ?? `anonymous function in ${enclosing ?? 'the module'}`
      if (last - first + 1 > max) out.push({ key: `${file} ${name}`, text: `${file}:${first + 1} ${name} (${last - first + 1} lines)` })
      inner = own ?? enclosing
    }
    ts.forEachChild(node, (child) => visit(child, inner))
  }
  visit(source, undefined)
  return out
}

/**
 * Check types are listed once, in src/schema/check-types.ts (and the spec's vocabulary,
 * `CHECK_TYPES` in src/schema/enums.ts). Anywhere else in src/, a list of two or more check
 * type names is a second list the compiler cannot keep true: an array or set of them, a union
 * type of them, an object keyed by them, or a chain of comparisons (`===`, `!==`, `?:`, `||`,
 * `if … else if`, `switch`) naming them. An object keyed by them may stay when it is pinned with
 * `satisfies` (a missing type does not compile), as the probers' map is.
 */
const TABLE_FILES = ['src/schema/check-types.ts', 'src/schema/enums.ts']
const TYPE_NAMES = new Set<string>(CHECK_TYPES)

function checkTypeLists(file: string, text: string): string[] {
  if (TABLE_FILES.includes(file)) return []
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const out: string[] = []
  const line = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
  const report = (node: ts.Node, what: string, names: Iterable<string>) => {
    const distinct = [...new Set(names)]
    if (distinct.length >= 2) out.push(`${file}:${line(node)}: ${what} of check types (${distinct.join(', ')}); derive it from src/schema/check-types.ts`)
  }
  const nameOf = (node: ts.Node | undefined): string | undefined =>
    node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && TYPE_NAMES.has(node.text) ? node.text : undefined
  const isComparison = (node: ts.Node): node is ts.BinaryExpression =>
    ts.isBinaryExpression(node) &&
    [
      ts.SyntaxKind.EqualsEqualsEqualsToken,
      ts.SyntaxKind.ExclamationEqualsEqualsToken,
      ts.SyntaxKind.EqualsEqualsToken,
      ts.SyntaxKind.ExclamationEqualsToken,
    ].includes(node.operatorToken.kind)
  const isChainLink = (node: ts.Node) =>
    ts.isConditionalExpression(node) ||
    ts.isParenthesizedExpression(node) ||
    (ts.isBinaryExpression(node) &&
      [ts.SyntaxKind.BarBarToken, ts.SyntaxKind.AmpersandAmpersandToken, ts.SyntaxKind.QuestionQuestionToken].includes(node.operatorToken.kind))
  /** The names compared in a chain of conditions (not looking into the branches' own chains twice). */
  const compared = (node: ts.Node, names: string[] = []): string[] => {
    if (isComparison(node)) {
      for (const side of [node.left, node.right]) {
        const name = nameOf(side)
        if (name) names.push(name)
      }
    } else if (isChainLink(node)) ts.forEachChild(node, (child) => void compared(child, names))
    return names
  }
  const visit = (node: ts.Node) => {
    if (ts.isArrayLiteralExpression(node))
      report(
        node,
        'an array',
        node.elements.map(nameOf).filter((n): n is string => !!n),
      )
    else if (ts.isUnionTypeNode(node)) {
      report(
        node,
        'a union',
        node.types.map((t) => (ts.isLiteralTypeNode(t) ? nameOf(t.literal) : undefined)).filter((n): n is string => !!n),
      )
    } else if (ts.isObjectLiteralExpression(node) && !ts.isSatisfiesExpression(node.parent)) {
      const keys = node.properties.map((p) => (p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? p.name.text : undefined))
      report(
        node,
        'an object keyed by the names',
        keys.filter((k): k is string => !!k && TYPE_NAMES.has(k)),
      )
    } else if ((isComparison(node) || isChainLink(node)) && !isChainLink(node.parent)) report(node, 'a chain of comparisons', compared(node))
    else if (ts.isIfStatement(node) && !(ts.isIfStatement(node.parent) && node.parent.elseStatement === node)) {
      const names: string[] = []
      for (let at: ts.Statement | undefined = node; at && ts.isIfStatement(at); at = at.elseStatement) compared(at.expression, names)
      report(node, 'an if … else if chain', names)
    } else if (ts.isSwitchStatement(node)) {
      report(
        node,
        'a switch',
        node.caseBlock.clauses.map((c) => (ts.isCaseClause(c) ? nameOf(c.expression) : undefined)).filter((n): n is string => !!n),
      )
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

/** The one module of src/server/ and src/runner/ that reads the system's clock (issue 39). */
const CLOCK_MODULE = 'src/runner/clock.ts'

/**
 * Every wall-clock read of src/server/ and src/runner/ outside the clock's module: `Date.now`
 * (called or passed on), `new Date()` without an argument and `Date()`. Each reads the machine's
 * time where a test's clock cannot reach it; the server's clock (or `performance.now()` for
 * elapsed time) is the way. Code in strings (the dashboard's script for the browser) is not read.
 */
function clockReads(file: string, text: string): string[] {
  if (file === CLOCK_MODULE || !/^src\/(server|runner)\//.test(file)) return []
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const out: string[] = []
  const isDate = (node: ts.Node) => ts.isIdentifier(node) && node.text === 'Date'
  const report = (node: ts.Node, what: string) =>
    out.push(
      `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}: ${what} reads the machine's clock; use the server's Clock (${CLOCK_MODULE}), or performance.now() for elapsed time`,
    )
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node) && isDate(node.expression) && node.name.text === 'now') report(node, 'Date.now')
    else if (ts.isNewExpression(node) && isDate(node.expression) && (node.arguments ?? []).length === 0) report(node, 'new Date()')
    else if (ts.isCallExpression(node) && isDate(node.expression)) report(node, 'Date()')
    ts.forEachChild(node, visit)
  }
  visit(source)
  return out
}

/** src/server/store/index.ts re-exports the Store interface's files (store/types/), and each stays small enough to read (issue 39). */
const STORE_INDEX_MAX_LINES = 40
const STORE_TYPES_MAX_LINES = 400

/** The one repository, per store, of the tables of JSON bodies (src/server/store/json-body-rows.ts). */
const JSON_BODY_REPOSITORIES = ['src/server/store/sqlite/json-body.ts', 'src/server/store/postgres/json-body.ts']

/**
 * Every statement of a store's file that writes a table of JSON_BODY_TABLES (its rows, children
 * or index) outside that store's JSON-body repository: a per-table copy of the repository's CRUD.
 * A read of those tables elsewhere (a join, the scheduler's list of every group) is fine.
 */
function jsonBodyCopies(file: string, text: string, tables: readonly string[] = jsonBodyTableNames()): string[] {
  if (!/^src\/server\/store\/(sqlite|postgres)\//.test(file) || JSON_BODY_REPOSITORIES.includes(file)) return []
  const writes = new RegExp(`\\b(INSERT\\s+(?:OR\\s+\\w+\\s+)?INTO|UPDATE|DELETE\\s+FROM)\\s+(${tables.join('|')})\\b`, 'g')
  return [...text.matchAll(writes)].map(
    (m) =>
      `${file}:${text.slice(0, m.index).split('\n').length}: ${m[1].split(/\s+/)[0].toUpperCase()} of ${m[2]}, a table of JSON bodies: add its row to JSON_BODY_TABLES (src/server/store/json-body-rows.ts) instead of a repository of its own`,
  )
}

describe('architecture', () => {
  const files = [...walk(join(root, 'src')), ...walk(join(root, 'constructs'))].map((f) => relative(root, f)).sort()
  const imports: ImportRecord[] = []
  const strings = new Map<string, string[]>()
  for (const file of files) {
    const parsed = importsOf(file, readFileSync(join(root, file), 'utf8'))
    imports.push(...parsed.imports)
    strings.set(file, parsed.strings)
  }

  it('every folder imports only what docs/architecture.md allows', () => {
    expect(files.length).toBeGreaterThan(50)
    expect(imports.length).toBeGreaterThan(200)
    expect(violations(imports, strings)).toEqual([])
  })

  it('reports a forbidden import with the file and the import', () => {
    const sample: ImportRecord[] = [
      { file: 'src/plan/x.ts', specifier: '../apply/execute.js', target: 'src/apply/execute.ts', typeOnly: false },
      { file: 'src/apply/x.ts', specifier: '../plan/types.js', target: 'src/plan/types.ts', typeOnly: false },
      { file: 'src/apply/y.ts', specifier: '../plan/types.js', target: 'src/plan/types.ts', typeOnly: true },
      { file: 'src/apply/z.ts', specifier: '../plan/plan.js', target: 'src/plan/plan.ts', typeOnly: true },
      { file: 'constructs/x.ts', specifier: '../src/project/types.js', target: 'src/project/types.ts', typeOnly: true },
      { file: 'src/api/x.ts', specifier: '../cli/engine.js', target: 'src/cli/engine.ts', typeOnly: true },
      { file: 'src/runner/x.ts', specifier: '../resources/index.js', target: 'src/resources/index.ts', typeOnly: false },
      { file: 'src/server/routes/x.ts', specifier: '../store/sqlite/index.js', target: 'src/server/store/sqlite/index.ts', typeOnly: false },
      { file: 'src/server/routes/y.ts', specifier: 'better-sqlite3', typeOnly: false },
      { file: 'src/plan/plan.ts', specifier: './render/view.js', target: 'src/plan/render/view.ts', typeOnly: false },
    ]
    const found = violations(sample, new Map([['src/server/routes/z.ts', ['SELECT * FROM checks WHERE id = ?']]]))
    expect(found).toEqual([
      "src/plan/x.ts: import '../apply/execute.js' (plan may import state, resources, api, schema; see docs/architecture.md)",
      "src/apply/x.ts: import '../plan/types.js' (apply may import type:plan/types, state, resources, api; see docs/architecture.md)",
      "src/apply/z.ts: import '../plan/plan.js' (apply may import type:plan/types, state, resources, api; see docs/architecture.md)",
      "constructs/x.ts: import '../src/project/types.js' (constructs may import type:resources/types, schema; see docs/architecture.md)",
      "src/api/x.ts: import '../cli/engine.js' (nothing imports src/cli)",
      "src/runner/x.ts: import '../resources/index.js' (runner may import schema; see docs/architecture.md)",
      "src/server/routes/x.ts: import '../store/sqlite/index.js' (only the store and src/server/index.ts may use the SQLite store; go through the Store interface (src/server/store/index.ts))",
      "src/server/routes/y.ts: import 'better-sqlite3' (only src/server/store/sqlite/ may use better-sqlite3)",
      "src/plan/plan.ts: import './render/view.js' (the plan is data: only src/plan/render/, its index and saved plans use the renderers)",
      'src/server/routes/z.ts: SQL outside src/server/store: "SELECT * FROM checks WHERE id = ?"',
    ])
  })

  it('the parts of src/server/ import each other in one direction only: no cycle between them, nor in the rules', () => {
    expect(serverCycles(imports), 'parts of src/server/ that import each other').toEqual([])
    const ruled = Object.entries(SERVER_FOLDERS_ALLOWED).flatMap(([from, tos]) =>
      tos.map((to): ImportRecord => ({ file: `src/server/${from}/x.ts`, specifier: `../${to}/x.js`, target: `src/server/${to}/x.ts`, typeOnly: false })),
    )
    expect(ruled.length).toBeGreaterThan(10)
    expect(serverCycles(ruled), 'the rules of docs/architecture.md').toEqual([])
  })

  it('reports an import between parts of src/server/ against the rules, and a cycle between them, naming the parts', () => {
    /** An import of `specifier` by `file`, resolved as importsOf does. */
    const imp = (file: string, specifier: string, typeOnly = false): ImportRecord => ({
      file,
      specifier,
      target: relative(root, resolve(dirname(join(root, file)), specifier)).replace(/\.js$/, '.ts'),
      typeOnly,
    })
    const sample = [
      imp('src/server/alerts/subscribers.ts', '../web/status-page.js'),
      imp('src/server/web/subscribers.ts', '../alerts/subscribers.js'),
      imp('src/server/heartbeats/index.ts', '../scheduler/groups.js'),
      imp('src/server/scheduler/index.ts', '../heartbeats/index.js'),
      imp('src/server/store/sqlite/checks.ts', '../../errors.js', true),
      imp('src/server/errors.ts', './results/index.js'),
      imp('src/server/routes/checks.ts', '../app.js'),
      // allowed: down the table, a shared module, keys.ts from the store, the wiring
      imp('src/server/routes/checks.ts', '../scheduler/index.js'),
      imp('src/server/alerts/worker.ts', '../outage.js'),
      imp('src/server/store/index.ts', '../keys.js', true),
      imp('src/server/index.ts', './app.js'),
    ]
    expect(violations(sample)).toEqual([
      "src/server/alerts/subscribers.ts: import '../web/status-page.js' (src/server/alerts/ may import store/, status-pages/, keys.ts, the shared modules; see docs/architecture.md)",
      "src/server/heartbeats/index.ts: import '../scheduler/groups.js' (src/server/heartbeats/ may import store/, results/, keys.ts, the shared modules; see docs/architecture.md)",
      "src/server/store/sqlite/checks.ts: import '../../errors.js' (src/server/store/ may import keys.ts; see docs/architecture.md)",
      "src/server/errors.ts: import './results/index.js' (a shared module of src/server/ may import keys.ts, store/; see docs/architecture.md)",
      "src/server/routes/checks.ts: import '../app.js' (app.ts and index.ts wire the server: nothing in src/server/ imports them)",
    ])
    expect(serverCycles(sample)).toEqual(['alerts/ ⇄ web/', 'heartbeats/ ⇄ scheduler/'])
  })

  it('check types are listed once: no array, set, union, map or comparison chain of their names outside src/schema/check-types.ts', () => {
    const found = files.filter((f) => f.startsWith('src/')).flatMap((file) => checkTypeLists(file, readFileSync(join(root, file), 'utf8')))
    expect(found).toEqual([])
  })

  it('src/server/ and src/runner/ read the time only through the clock (src/runner/clock.ts)', () => {
    const found = files.filter((f) => /^src\/(server|runner)\//.test(f)).flatMap((file) => clockReads(file, readFileSync(join(root, file), 'utf8')))
    expect(found).toEqual([])
  })

  it('reports every direct read of the clock, with its file and line, and passes the clock, a date of a time and elapsed time', () => {
    const sample = [
      'const a = Date.now()',
      'const b = new Date().toISOString()',
      'const c = options.now ?? Date.now',
      'const d = new Date',
      'const e = Date()',
      // allowed: the server's clock, a given time, elapsed time, code in a string
      'const f = clock.now()',
      'const g = new Date(clock.now()).toISOString()',
      'const h = performance.now()',
      "const i = 'new Date().toISOString() + Date.now()'",
      'const j = Date.parse(text)',
    ].join('\n')
    const why = "reads the machine's clock; use the server's Clock (src/runner/clock.ts), or performance.now() for elapsed time"
    expect(clockReads('src/server/x.ts', sample)).toEqual([
      `src/server/x.ts:1: Date.now ${why}`,
      `src/server/x.ts:2: new Date() ${why}`,
      `src/server/x.ts:3: Date.now ${why}`,
      `src/server/x.ts:4: new Date() ${why}`,
      `src/server/x.ts:5: Date() ${why}`,
    ])
    expect(clockReads('src/runner/y.ts', sample)).toHaveLength(5)
    expect(clockReads('src/runner/clock.ts', sample), "the clock's own module").toEqual([])
    expect(clockReads('src/cli/x.ts', sample), 'outside src/server/ and src/runner/').toEqual([])
  })

  it("every type of the check-type table is one of the spec's, so every checkType query accepts it", () => {
    // the table is declared against the spec's list: a type it does not name does not compile (npm run typecheck)
    // @ts-expect-error 'SSL' is not one of CHECK_TYPES (src/schema/enums.ts)
    const copy = { ...CHECK_TYPE_TABLE, SSL: CHECK_TYPE_TABLE.TCP } satisfies CheckTypeTable
    const linked: ServiceCheckType extends CheckType ? true : never = true
    expect([linked, Object.keys(copy)]).toEqual([true, [...SERVICE_CHECK_TYPES, 'SSL']])
    for (const type of SERVICE_CHECK_TYPES) {
      expect(CHECK_TYPES, type).toContain(type)
      expect(checkListQuerySchema.safeParse({ checkType: type }).success, `GET /v1/checks?checkType=${type}`).toBe(true)
      expect(metricsQuerySchema.safeParse({ checkType: type }).success, `GET /v1/analytics/metrics?checkType=${type}`).toBe(true)
    }
  })

  it('reports each kind of check type list, with its file and line', () => {
    const sample = [
      "const RUNNABLE = new Set(['DNS', 'ICMP', 'API'])",
      "type Runnable = 'DNS' | 'ICMP' | 'API'",
      "const PATH = { API: 'api-checks', DNS: 'dns' }",
      "const ok = type === 'API' || type === 'DNS'",
      "const x = type === 'API' ? 1 : type === 'DNS' ? 2 : 3",
      "if (type === 'API') f()\nelse if (type === 'ICMP') g()",
      "switch (type) { case 'DNS': break; case 'TCP': break }",
      // one name, or a map pinned by satisfies: allowed
      "const api = type === 'API'",
      'const PROBERS = { DNS: a, ICMP: b } satisfies Record<RunnableCheckType, Prober>',
      "const single = ['API']",
    ].join('\n')
    expect(checkTypeLists('src/x.ts', sample)).toEqual([
      'src/x.ts:1: an array of check types (DNS, ICMP, API); derive it from src/schema/check-types.ts',
      'src/x.ts:2: a union of check types (DNS, ICMP, API); derive it from src/schema/check-types.ts',
      'src/x.ts:3: an object keyed by the names of check types (API, DNS); derive it from src/schema/check-types.ts',
      'src/x.ts:4: a chain of comparisons of check types (API, DNS); derive it from src/schema/check-types.ts',
      'src/x.ts:5: a chain of comparisons of check types (API, DNS); derive it from src/schema/check-types.ts',
      'src/x.ts:6: an if … else if chain of check types (API, ICMP); derive it from src/schema/check-types.ts',
      'src/x.ts:8: a switch of check types (DNS, TCP); derive it from src/schema/check-types.ts',
    ])
    expect(checkTypeLists('src/schema/check-types.ts', sample)).toEqual([])
  })

  it('the tables of JSON bodies are written by one repository per store, not by a copy per table', () => {
    expect(jsonBodyTableNames()).toEqual(
      expect.arrayContaining(['check_groups', 'alert_channels', 'snippets', 'incidents', 'incident_updates', 'status_pages', 'status_page_services']),
    )
    for (const file of JSON_BODY_REPOSITORIES) expect(files, `${file} exists`).toContain(file)
    expect(files.flatMap((file) => jsonBodyCopies(file, readFileSync(join(root, file), 'utf8')))).toEqual([])
  })

  it('reports a write of a table of JSON bodies outside the repository, with its file and line', () => {
    const sample = [
      'const list = db.prepare(`SELECT id, body FROM snippets WHERE account_id = ?`)',
      'const insert = db.prepare(`INSERT INTO snippets (account_id, body) VALUES (?, ?)`)',
      "await sql.run('UPDATE check_groups SET body = $1 WHERE id = $2', [body, id])",
      'db.prepare(`DELETE FROM status_page_services WHERE page_seq = ?`)',
      'db.prepare(`UPDATE checks SET body = ?`)',
    ].join('\n')
    expect(jsonBodyCopies('src/server/store/sqlite/x.ts', sample).map((line) => line.split(', a table')[0])).toEqual([
      'src/server/store/sqlite/x.ts:2: INSERT of snippets',
      'src/server/store/sqlite/x.ts:3: UPDATE of check_groups',
      'src/server/store/sqlite/x.ts:4: DELETE of status_page_services',
    ])
    expect(jsonBodyCopies('src/server/store/postgres/json-body.ts', sample)).toEqual([])
  })

  it('src/server/store/index.ts declares nothing: it re-exports the files of store/types/, one per concern, each of a bounded size', () => {
    const text = readFileSync(join(root, 'src/server/store/index.ts'), 'utf8')
    const source = ts.createSourceFile('index.ts', text, ts.ScriptTarget.Latest, true)
    const own = source.statements
      .filter((s) => !ts.isExportDeclaration(s) || s.exportClause !== undefined || !s.moduleSpecifier)
      .map((s) => s.getText(source).split('\n')[0])
    expect(own, 'declared in src/server/store/index.ts: move it to the file of its concern in src/server/store/types/').toEqual([])
    expect(text.split('\n').length, 'lines of src/server/store/index.ts').toBeLessThanOrEqual(STORE_INDEX_MAX_LINES)
    const types = readdirSync(join(root, 'src/server/store/types'))
      .filter((f) => f.endsWith('.ts'))
      .sort()
    const exported = source.statements.filter(ts.isExportDeclaration).map((s) => (s.moduleSpecifier as ts.StringLiteral).text)
    expect(exported.sort(), 'every file of store/types/ re-exported by store/index.ts').toEqual(types.map((f) => `./types/${f.replace(/\.ts$/, '.js')}`))
    for (const file of types) {
      const lines = readFileSync(join(root, 'src/server/store/types', file), 'utf8').split('\n').length
      expect(lines, `lines of src/server/store/types/${file}: split it by concern`).toBeLessThanOrEqual(STORE_TYPES_MAX_LINES)
    }
  })

  it('every resource kind has one descriptor and its construct is exported under that name', () => {
    const exported = constructs as unknown as Record<string, new (id: string, props: object) => { __monitorsKind: string; __monitorsConstruct: string }>
    for (const kind of RESOURCE_KINDS) {
      const descriptor = DESCRIPTORS[kind]
      expect(descriptor.kind).toBe(kind)
      const Construct = exported[descriptor.construct]
      expect(typeof Construct, `constructs/index.ts exports ${descriptor.construct}`).toBe('function')
      const made = new Construct('x', {})
      expect([made.__monitorsKind, made.__monitorsConstruct]).toEqual([kind, descriptor.construct])
    }
  })

  describe(`no function in src/ is longer than ${MAX_FUNCTION_LINES} lines`, () => {
    const long = files.filter((f) => f.startsWith('src/')).flatMap((file) => longFunctions(file, readFileSync(join(root, file), 'utf8')))

    it('every function is at most the limit, but for the ones listed as being split', () => {
      expect(
        long.filter((f) => !LONG_FUNCTIONS_ALLOWED.includes(f.key)).map((f) => f.text),
        `functions over ${MAX_FUNCTION_LINES} lines: split them`,
      ).toEqual([])
    })

    it('every function listed as being split is still over the limit (else it leaves the list)', () => {
      const still = new Set(long.map((f) => f.key))
      expect(
        LONG_FUNCTIONS_ALLOWED.filter((key) => !still.has(key)),
        'no longer over the limit: remove from LONG_FUNCTIONS_ALLOWED',
      ).toEqual([])
    })

    it('finds a function of 101 lines of every kind, naming its file, line and name, and passes one of 100', () => {
      const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  const x${i} = ${i}`).join('\n')
      const sample = [
        `export function declared() {\n${body(101)}\n}`,
        `function fits() {\n${body(100)}\n}`,
        `class Holder {\n  method() {\n${body(101)}\n  }\n}`,
        `const arrow = () => {\n${body(101)}\n}`,
        `const expression = function () {\n${body(101)}\n}`,
        `register(function () {\n${body(101)}\n})`,
      ].join('\n')
      expect(longFunctions('src/x.ts', sample).map((f) => f.text)).toEqual([
        'src/x.ts:1 declared (101 lines)',
        'src/x.ts:203 method (101 lines)',
        'src/x.ts:305 arrow (101 lines)',
        'src/x.ts:406 expression (101 lines)',
        'src/x.ts:507 anonymous function in the module (101 lines)',
      ])
    })
  })

  describe('docs/architecture.md is the one folder map, and it is true', () => {
    const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8')
    const section = (title: string) => {
      const start = doc.indexOf(`## ${title}\n`)
      expect(start, `docs/architecture.md has a section "${title}"`).toBeGreaterThanOrEqual(0)
      const end = doc.indexOf('\n## ', start + 1)
      return doc.slice(start, end < 0 ? undefined : end)
    }
    /** The first cell of each row of a section's table, and the rest of the row. */
    const rows = (title: string) =>
      [...section(title).matchAll(/^\| ([^|]+) \| (.*) \|$/gm)]
        .map((m) => ({ first: m[1].trim(), rest: m[2] }))
        .filter((r) => r.first !== 'Folder' && !/^-+$/.test(r.first))

    it('the folder map names every folder of src/ and src/server/, and only folders that exist', () => {
      const mapped = rows('Folder map').map((r) => r.first.replace(/`/g, ''))
      const folders = (dir: string) =>
        readdirSync(join(root, dir), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => `${dir}/${e.name}/`)
      const wanted = [...folders('src'), ...folders('src/server')]
      expect(
        wanted.filter((f) => !mapped.includes(f)),
        'folders missing from the map',
      ).toEqual([])
      expect(
        mapped.filter((f) => !existsSync(join(root, f))),
        'rows naming nothing that exists',
      ).toEqual([])
    })

    it('its import rules inside src/server/ are the ones this test enforces, a row for each folder', () => {
      const shown = new Map<string, { folders: string[]; rest: string }>()
      for (const m of section('Import rules inside src/server/').matchAll(/^\| `([a-z-]+)\/` \| (.*) \|$/gm)) {
        shown.set(m[1], { folders: [...m[2].matchAll(/`([a-z-]+)\/`/g)].map((n) => n[1]), rest: m[2] })
      }
      const folders = readdirSync(join(root, 'src/server'), { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort()
      expect(Object.keys(SERVER_FOLDERS_ALLOWED).sort(), 'a rule for every folder of src/server/').toEqual(folders)
      expect([...shown.keys()].sort(), 'a row for every folder of src/server/').toEqual(folders)
      for (const [folder, allowed] of Object.entries(SERVER_FOLDERS_ALLOWED))
        expect(shown.get(folder)?.folders, `the row of src/server/${folder}/`).toEqual(allowed)
      expect(shown.get('store')?.rest).toContain('`keys.ts`')
    })

    it('its import rules are the ones this test enforces', () => {
      const layers = Object.keys(ALLOWED) as Layer[]
      for (const { first, rest } of rows('Import rules')) {
        const m = /^`(?:src\/)?([a-z]+)\/`$/.exec(first)
        if (!m) continue // the rows about any folder and the store's packages
        const layer = m[1] as Layer
        expect(layers, `${first} is a layer`).toContain(layer)
        const named = [...rest.matchAll(/`([^`]+)`/g)].map((n) => n[1].replace(/^src\//, '').replace(/\.ts$/, ''))
        const expected = rest.startsWith('everything above') ? layers.filter((l) => l !== layer) : ALLOWED[layer].map((rule) => rule.replace(/^type:/, ''))
        const shown = rest.startsWith('everything above') ? layers.filter((l) => l !== layer) : named.filter((n) => n !== 'import type')
        expect(shown.sort(), `the import rule of ${first}`).toEqual([...expected].sort())
        for (const rule of ALLOWED[layer])
          if (rule.startsWith('type:')) expect(rest, `${first}: ${rule.slice(5)} through import type only`).toContain('through `import type` only')
      }
    })
  })
})
