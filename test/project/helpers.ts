import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'project')

/**
 * Writes a throw-away project (for files that must not sit in the repo, such as a syntax
 * error that would break type checking) with `monitors-as-code` installed as a link to this
 * repository, the way a user's project has it in node_modules.
 */
export function tempProject(files: Record<string, string>, { link = true } = {}): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'monitors-project-')))
  if (link) {
    mkdirSync(path.join(dir, 'node_modules'), { recursive: true })
    symlinkSync(REPO_ROOT, path.join(dir, 'node_modules', 'monitors-as-code'), 'dir')
  }
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    writeFileSync(path.join(dir, name), text)
  }
  return dir
}
