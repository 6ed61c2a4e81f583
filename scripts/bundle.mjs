#!/usr/bin/env node
/**
 * Bundles the compiled CLI (dist/src/cli/main.js, from tsc) into dist/cli, from scratch:
 *   dist/cli/main.js (+ chunks)  ES modules, one chunk per command, for whatever imports the CLI
 *                                (the tests run it in-process, the benches)
 *   dist/cli/main.cjs            the same CLI as one CommonJS script: bin/monitors.cjs runs it
 *                                through vm.Script with a V8 code cache (see there), which Node 20
 *                                offers for scripts only, not for ES modules
 * Both leave out zod's 40-odd translations of its messages: see `englishOnly`.
 *
 *   node scripts/bundle.mjs [--metafile] [--analyze]
 * --metafile writes dist/cli/meta.esm.json and meta.cjs.json (what each output holds, for
 * https://esbuild.github.io/analyze/); --analyze prints what each ES module output holds.
 */
import { analyzeMetafile, build } from 'esbuild'
import { createRequire } from 'node:module'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const out = join(repo, 'dist/cli')
const analyze = process.argv.includes('--analyze')
const metafile = analyze || process.argv.includes('--metafile')

/**
 * zod's index re-exports every locale (`z.locales.de()` ...): 360 KB of messages we never use,
 * parsed and run on every command that validates. zod's own default, set in classic/schemas.js,
 * imports `locales/en.js` directly; so the locales index is replaced by one exporting `en`
 * alone, and every message stays as zod writes it (test/schema and test/project compare them).
 */
const zodLocales = join(dirname(createRequire(import.meta.url).resolve('zod/package.json')), 'v4/locales')
const englishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      resolve(args.resolveDir, args.path) === join(zodLocales, 'index.js') ? { path: 'zod-locales-en', namespace: 'zod-locales' } : undefined,
    )
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({
      contents: 'export { default as en } from "./en.js";\n',
      resolveDir: zodLocales,
      loader: 'js',
    }))
  },
}

/**
 * string-width (three copies, for yargs, cliui and wrap-ansi) builds Unicode property regexes
 * and an Intl.Segmenter as it loads: about 45 ms of every command's start, for help text that is
 * printable ASCII, whose width is its length (string-width 8 returns that itself, first thing).
 * Each copy is wrapped: printable ASCII answers at once, anything else goes to the real module,
 * loaded on first use.
 */
const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.pluginData === 'real') return undefined
      const real = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: 'real' })
      if (real.errors.length > 0) return { errors: real.errors }
      return { path: real.path, namespace: 'lazy-string-width' }
    })
    b.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: [
        'let real',
        'export default function stringWidth(string, options) {',
        '  if (typeof string === "string" && /^[\\u0020-\\u007E]*$/.test(string)) return string.length',
        `  real ??= require(${JSON.stringify(args.path)})`,
        '  return (real.default ?? real)(string, options)',
        '}',
      ].join('\n'),
      resolveDir: dirname(args.path),
      loader: 'js',
    }))
  },
}

/**
 * yargs imports node:assert for two checks of its own arguments; loading assert costs 5 to 15 ms
 * of every start (it loads util's inspection and colours). Both compare with Object.is, as
 * assert's do, and load assert only to throw its own error when the check fails.
 */
const lazyAssert = {
  name: 'lazy-assert',
  setup(b) {
    b.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
      /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]/.test(args.importer) ? { path: 'assert', namespace: 'lazy-assert' } : undefined,
    )
    b.onLoad({ filter: /.*/, namespace: 'lazy-assert' }, () => ({
      contents: [
        'export function notStrictEqual(actual, expected, message) {',
        '  if (Object.is(actual, expected)) require("node:assert").notStrictEqual(actual, expected, message)',
        '}',
        'export function strictEqual(actual, expected, message) {',
        '  if (!Object.is(actual, expected)) require("node:assert").strictEqual(actual, expected, message)',
        '}',
      ].join('\n'),
      loader: 'js',
    }))
  },
}

/**
 * yargs reads a package.json as it starts, for a version we then set ourselves: from the folder
 * above the `node_modules` it sits in, else from the working directory upwards, listing every
 * folder on the way (a project under a crowded /tmp, or a CLI reached through a symlink, paid
 * 20 ms for it). The bundle lives in dist/cli of this package, so that search starts at the
 * package's own root and ends there, at its package.json.
 */
const yargsOwnPackage = {
  name: 'yargs-own-package',
  setup(b) {
    b.onLoad({ filter: /[\\/]yargs[\\/]lib[\\/]platform-shims[\\/]esm\.mjs$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8')
      const from = "const mainFilename = __dirname.substring(0, __dirname.lastIndexOf('node_modules'));"
      if (!source.includes(from)) throw new Error(`yargs' platform shim changed: ${args.path} no longer sets mainFilename as expected`)
      return { contents: source.replace(from, 'const mainFilename = dirname(dirname(dirname(__dirname)));'), resolveDir: dirname(args.path), loader: 'js' }
    })
  },
}

const common = {
  entryPoints: [join(repo, 'dist/src/cli/main.js')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  packages: 'bundle',
  external: ['jiti', 'sucrase', 'fastify', 'better-sqlite3', 'pg', 'badge-maker', 'undici', 'esbuild'],
  logLevel: 'warning',
  plugins: [englishOnly, lazyStringWidth, lazyAssert, yargsOwnPackage],
  metafile,
}

// stale chunks of earlier builds would pile up beside the new ones
rmSync(out, { recursive: true, force: true })
const results = await Promise.all([
  build({
    ...common,
    format: 'esm',
    splitting: true,
    outdir: out,
    banner: { js: "import { createRequire as __monitorsRequire } from 'node:module'; const require = __monitorsRequire(import.meta.url);" },
  }),
  build({
    ...common,
    format: 'cjs',
    outfile: join(out, 'main.cjs'),
    // a third smaller to read from disk at every start; names stay, for stack traces
    minifyWhitespace: true,
    // `require`, `__filename` come from the CommonJS wrapper bin/monitors.cjs gives the script
    define: { 'import.meta.url': '__monitorsImportMetaUrl' },
    banner: { js: "const __monitorsImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
  }),
])
if (metafile) {
  writeFileSync(join(out, 'meta.esm.json'), JSON.stringify(results[0].metafile))
  writeFileSync(join(out, 'meta.cjs.json'), JSON.stringify(results[1].metafile))
}
if (analyze) console.log(await analyzeMetafile(results[0].metafile))

/**
 * dist/build-id: a hash of the compiled code (dist/src, dist/constructs, and these bundles, which
 * hold zod and every other bundled package). What the CLI caches of validated constructs is for
 * one build only (src/project/construct-cache.ts): a changed schema never reuses an entry.
 */
function buildId() {
  const hash = createHash('sha256')
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const file = join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (/\.(c?js|json)$/.test(entry.name) && !/^meta\./.test(entry.name))
        hash
          .update(`${file.slice(repo.length)}\0`)
          .update(readFileSync(file))
          .update('\0')
    }
  }
  for (const dir of ['dist/src', 'dist/constructs', 'dist/cli']) walk(join(repo, dir))
  return hash.digest('hex')
}
writeFileSync(join(repo, 'dist/build-id'), `${buildId()}\n`)
