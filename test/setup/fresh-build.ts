import { readdirSync, statSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

const repo = resolve(import.meta.dirname, '../..')
const BUNDLE = 'dist/cli/main.js'

/** The newest file under `dir` (recursively), or undefined when it holds none. */
function newest(dir: string): { file: string; mtimeMs: number } | undefined {
  let found: { file: string; mtimeMs: number } | undefined
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    const candidate = entry.isDirectory() ? newest(path) : entry.isFile() ? { file: path, mtimeMs: statSync(path).mtimeMs } : undefined
    if (candidate && (!found || candidate.mtimeMs > found.mtimeMs)) found = candidate
  }
  return found
}

/**
 * The end-to-end tests run the built CLI (dist/), so a test run after editing src/ without a
 * build would test the old code and pass or fail for nothing. Refuse to start instead.
 */
export function staleBuildProblem(root = repo): string | undefined {
  let built: number
  try {
    built = statSync(join(root, BUNDLE)).mtimeMs
  } catch {
    return `${BUNDLE} is missing: run \`npm run build\` before the tests (they run the built CLI).`
  }
  for (const dir of ['src', 'constructs']) {
    const source = newest(join(root, dir))
    if (source && source.mtimeMs > built) {
      return `${BUNDLE} is older than ${relative(root, source.file)}: run \`npm run build\` before the tests (they run the built CLI), or \`npm test\`, which builds first.`
    }
  }
  return undefined
}

export default function setup(): void {
  const problem = staleBuildProblem()
  if (problem) throw new Error(problem)
}
