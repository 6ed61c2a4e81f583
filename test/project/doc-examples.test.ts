/**
 * Every TypeScript example of README.md and docs/*.md (each ```ts or ```typescript block) runs:
 * written as a file of a temporary project (a check file, or the config when it is one), it
 * type-checks with the options `monitors init` writes, and `monitors plan` with no target loads,
 * validates and plans it against the embedded local server, for each environment its config
 * declares. A block that cannot run (a fragment, a signature) says so in its info string,
 * ```ts fragment; an unmarked block that does not run fails here, naming its page and line.
 *
 * Conventions a block may rely on (docs/development.md, "Examples in the docs"):
 * - a first line `// path/file.ts` names its file in the project (`// monitoring.config.ts`: the
 *   config); otherwise a block is a check file in `checks/`, and one calling defineConfig the config;
 * - without an import from 'monitors-as-code', the names it uses of the package are imported for it;
 * - the files it names (`entrypoint: './x.spec.ts'`, `playwrightConfigPath: '…'`) are written
 *   beside it: a Playwright test, a script, a Playwright config declaring the `pwProjects` named.
 *
 * The blocks of a page share projects, as few as their logical ids and configs allow: one plan
 * each (and one type-check of every block), so the whole file runs in seconds.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, posix } from 'node:path'
import { pathToFileURL } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import { makeProject, monitors, repo, STACK_LINE } from '../helpers/cli.js'
import { typeErrors } from '../helpers/typecheck.js'
import { DESCRIPTORS } from '../../src/resources/registry.js'

interface Block {
  /** the page, relative to the repository (`docs/constructs.md`) */
  page: string
  /** the line of its opening fence */
  line: number
  info: string
  code: string
}

/** A fenced block's info string marking it as one that does not run. */
const FRAGMENT = 'fragment'
const PAGES = [
  'README.md',
  ...readdirSync(join(repo, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
]

/** The TypeScript blocks of a page (``` or ~~~ fences, any indent). */
function typescriptBlocks(page: string, text: string): Block[] {
  const out: Block[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(.*)$/.exec(lines[i])
    if (!open) continue
    const [, indent, fence, info] = open
    const close = new RegExp(`^\\s*${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`)
    let end = i + 1
    while (end < lines.length && !close.test(lines[end])) end++
    const language = info.trim().split(/\s+/)[0]
    if (language === 'ts' || language === 'typescript') {
      out.push({
        page,
        line: i + 1,
        info: info.trim(),
        code: `${lines
          .slice(i + 1, end)
          .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
          .join('\n')}\n`,
      })
    }
    i = end
  }
  return out
}

const isFragment = (block: Block) => block.info.split(/\s+/).slice(1).includes(FRAGMENT)
const where = (block: Block) => `${block.page}:${block.line}`

/** The file a block is in its project: named by its first line, else the config or a check file of its own. */
function fileOf(block: Block): string {
  const named = /^\/\/ ([\w./-]+\.(?:ts|mts|cts))\s*$/.exec(block.code.split('\n')[0])?.[1]
  if (named) return named
  if (/\bdefineConfig\(/.test(block.code)) return 'monitoring.config.ts'
  return `checks/${posix.basename(block.page, '.md').toLowerCase()}-${block.line}.check.ts`
}

/** The constructs a block makes (`DnsCheck:shop-dns`): two blocks making the same one go to different projects. */
const constructsOf = (code: string) => new Set([...code.matchAll(/new\s+(\w+)\(\s*(['"`])([^'"`]+)\2/g)].map((m) => `${m[1]}:${m[3]}`))

interface DocProject {
  blocks: Block[]
  files: Map<string, Block>
  constructs: Set<string>
}

/** The runnable blocks of a page in as few projects as their files and constructs allow. */
function projectsOf(blocks: readonly Block[]): DocProject[] {
  const projects: DocProject[] = []
  for (const block of blocks) {
    const file = fileOf(block)
    const made = constructsOf(block.code)
    let project = projects.find((p) => !p.files.has(file) && ![...made].some((c) => p.constructs.has(c)))
    if (!project) projects.push((project = { blocks: [], files: new Map(), constructs: new Set() }))
    project.blocks.push(block)
    project.files.set(file, block)
    for (const c of made) project.constructs.add(c)
  }
  return projects
}

let packageNames: string[] = []

/** A block as its file holds it: with the import of the package's names it uses, when it has none. */
function fileText(code: string): string {
  if (/from\s+['"]monitors-as-code['"]/.test(code)) return code
  const used = packageNames.filter((name) => new RegExp(`\\b${name}\\b`).test(code))
  return used.length === 0 ? code : `import { ${used.join(', ')} } from 'monitors-as-code'\n${code}`
}

const TEST_FILE = "import { test } from '@playwright/test'\n\ntest('example @smoke', async () => {})\n"

/** The files a block names, written beside it when the project has none there: tests, scripts, a Playwright config. */
function filesNamed(file: string, code: string): Record<string, string> {
  const out: Record<string, string> = {}
  const at = (relative: string) => posix.normalize(posix.join(posix.dirname(file), relative))
  for (const m of code.matchAll(/entrypoint:\s*(['"])([^'"]+)\1/g)) {
    out[at(m[2])] = /\.(spec|test)\.[cm]?[jt]s$/.test(m[2]) ? TEST_FILE : "console.log('example script')\n"
  }
  for (const m of code.matchAll(/playwrightConfigPath:\s*(['"])([^'"]+)\1/g)) {
    const projects = [...(/pwProjects:\s*\[([^\]]*)\]/.exec(code)?.[1] ?? "'chromium'").matchAll(/['"]([^'"]+)['"]/g)].map((p) => p[1])
    out[at(m[2])] =
      `import { defineConfig } from '@playwright/test'\n\nexport default defineConfig({ testDir: './tests', projects: [${projects.map((p) => `{ name: '${p}' }`).join(', ')}] })\n`
    out[posix.join(posix.dirname(at(m[2])), 'tests/example.spec.ts')] = TEST_FILE
  }
  return out
}

/** The project of some blocks, in a new folder: each block its file, the files they name, a default config when none is a config. */
function writeProject(project: DocProject, page: string): string {
  const files: Record<string, string> = {}
  for (const [file, block] of project.files) {
    for (const [named, text] of Object.entries(filesNamed(file, block.code))) if (!project.files.has(named)) files[named] = text
  }
  for (const [file, block] of project.files) files[file] = fileText(block.code)
  const dir = makeProject(files)
  if (!project.files.has('monitoring.config.ts')) {
    writeFileSync(
      join(dir, 'monitoring.config.ts'),
      `import { defineConfig } from 'monitors-as-code'\n\nexport default defineConfig({ projectName: '${posix.basename(page, '.md').toLowerCase()}-examples' })\n`,
    )
  }
  // a config alone: the project needs a check file for checkMatch to match
  if ([...project.files.keys()].every((f) => f === 'monitoring.config.ts')) writeFileSync(join(dir, 'checks.check.ts'), 'export {}\n')
  return dir
}

/**
 * The environment variables the blocks read (`process.env.PD_ROUTING_KEY`), set as a user sets
 * them before a plan: a URL where the name says so, else a made-up secret. Those naming the
 * target (`baseUrl:`, `accountId:`) stay unset: the plan goes to the embedded server.
 */
function variablesRead(blocks: readonly Block[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (const { code } of blocks) {
    const target = new Set([...code.matchAll(/(?:baseUrl|accountId):\s*process\.env\.(\w+)/g)].map((m) => m[1]))
    for (const [, name] of code.matchAll(/process\.env\.(\w+)/g)) {
      if (target.has(name) || name.startsWith('MONITORING_')) continue
      out[name] = /URL$/.test(name) ? `https://hooks.example.com/${name.toLowerCase()}` : `example-${name.toLowerCase()}-value`
    }
  }
  return out
}

/** `monitors plan` on the embedded server, once per environment the config declares (none: once). */
async function planEveryEnvironment(dir: string, env: Record<string, string>): Promise<Array<{ env?: string; code: number; output: string }>> {
  const first = await monitors(dir, ['plan'], env)
  const declared = /declares the environments ([\w, -]+): choose one/.exec(first.output)?.[1]
  if (first.code === 0 || !declared) return [{ code: first.code, output: first.output }]
  const runs = []
  for (const name of declared.split(', ')) runs.push({ env: name, ...(await monitors(dir, ['plan', '--env', name], env)) })
  return runs
}

const blocksByPage = new Map(PAGES.map((page) => [page, typescriptBlocks(page, readFileSync(join(repo, page), 'utf8'))]))
const runnablePages = PAGES.filter((page) => blocksByPage.get(page)!.some((b) => !isFragment(b)))

beforeAll(async () => {
  const own = (await import(/* @vite-ignore */ pathToFileURL(join(repo, 'dist', 'constructs', 'index.js')).href)) as Record<string, unknown>
  packageNames = Object.keys(own)
    .filter((name) => /^[A-Za-z]\w*$/.test(name))
    .sort()
})

/** One block of every kind's example (its descriptor's), the code the messages show: `must be a CheckGroup construct of this project, e.g. …`. */
function descriptorExamples(): Block {
  const code = Object.values(DESCRIPTORS)
    .map((d) => d.example)
    .join('\n')
  return { page: 'src/resources/kinds', line: 0, info: 'ts', code: `${code}\n` }
}

describe('the TypeScript examples of README.md and docs/', () => {
  it('are found: the pages have some, the fragments among them are few and marked', () => {
    const all = [...blocksByPage.values()].flat()
    expect(all.length).toBeGreaterThan(25)
    expect(runnablePages).toEqual(expect.arrayContaining(['README.md', 'docs/constructs.md', 'docs/writing-monitors.md']))
    const fragments = all.filter(isFragment)
    expect(fragments.length, fragments.map(where).join(', ')).toBeLessThan(all.length / 4)
  })

  it('type-check, each block a file of its project, with the options monitors init writes', () => {
    const files: string[] = []
    const owner = new Map<string, Block>()
    for (const page of runnablePages) {
      for (const project of projectsOf(blocksByPage.get(page)!.filter((b) => !isFragment(b)))) {
        const dir = writeProject(project, page)
        for (const [file, block] of project.files) {
          files.push(join(dir, file))
          owner.set(join(dir, file), block)
        }
      }
    }
    const kinds = descriptorExamples()
    const kindsDir = writeProject({ blocks: [kinds], files: new Map([['checks/kinds.check.ts', kinds]]), constructs: constructsOf(kinds.code) }, 'kinds.md')
    files.push(join(kindsDir, 'checks/kinds.check.ts'))
    owner.set(join(kindsDir, 'checks/kinds.check.ts'), kinds)
    // a canary the compiler must refuse: the check above it would pass a compiler that checks nothing
    const canary = join(
      makeProject({
        'checks/canary.check.ts':
          "import { ApiCheck } from 'monitors-as-code'\nnew ApiCheck('canary', { name: 'Canary', request: { method: 'GET', url: 1 } })\n",
      }),
      'checks/canary.check.ts',
    )
    const errors = typeErrors('/', [...files, canary])
    expect(errors.filter((e) => e.startsWith(canary.slice(1)))).toEqual([expect.stringContaining("Type 'number' is not assignable to type 'string'")])
    const shown = errors
      .filter((e) => !e.startsWith(canary.slice(1)))
      .map((e) => {
        const file = [...owner.keys()].find((f) => e.startsWith(`${f.slice(1)}(`))
        return file ? `${where(owner.get(file)!)} ${e.slice(file.length - 1)}` : e
      })
    expect(shown, 'mark a block that cannot run ```ts fragment').toEqual([])
  }, 60_000)

  it("each kind's example, which messages show, loads, validates and plans", async () => {
    const block = descriptorExamples()
    const dir = writeProject({ blocks: [block], files: new Map([['checks/kinds.check.ts', block]]), constructs: constructsOf(block.code) }, 'kinds.md')
    const run = await monitors(dir, ['plan'], variablesRead([block]))
    expect(run.code, run.output).toBe(0)
    for (const d of Object.values(DESCRIPTORS))
      expect(run.output, d.example).toMatch(new RegExp(`\\+ ${d.kind} \\S+ \\(${d.construct} in checks/kinds\\.check\\.ts\\)`))
  })

  it.each(runnablePages)(
    '%s: each block loads, validates and plans on the embedded server',
    async (page) => {
      const projects = projectsOf(blocksByPage.get(page)!.filter((b) => !isFragment(b)))
      for (const project of projects) {
        const dir = writeProject(project, page)
        const blocks = [...project.files].map(([file, block]) => `${where(block)} as ${file}`).join(', ')
        for (const run of await planEveryEnvironment(dir, variablesRead(project.blocks))) {
          const context = `${blocks}${run.env ? ` (--env ${run.env})` : ''}; mark a block that cannot run \`\`\`ts ${FRAGMENT}\n${run.output}`
          expect(run.output, context).not.toMatch(STACK_LINE)
          expect(run.code, context).toBe(0)
          expect(run.output, context).toMatch(/Plan: \d+ to create/)
          // each block making constructs was loaded (the config's checkMatch matches its file), each construct planned
          for (const [file, block] of project.files) {
            for (const made of constructsOf(block.code)) {
              const [construct, id] = made.split(/:(.*)/)
              expect(run.output, `${where(block)}: ${construct} "${id}" is not in the plan; ${context}`).toContain(` ${id} (${construct} in ${file})`)
            }
          }
        }
      }
    },
    60_000,
  )
})
