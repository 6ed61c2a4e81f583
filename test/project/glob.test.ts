import { describe, expect, it } from 'vitest'
import { findFiles, globToRegExp } from '../../src/project/index.js'
import { tempProject } from './helpers.js'

describe('checkMatch globs', () => {
  it.each([
    ['**/*.check.ts', 'a.check.ts', true],
    ['**/*.check.ts', 'x/y/a.check.ts', true],
    ['**/*.check.ts', 'a.check.tsx', false],
    ['**/*.check.ts', 'a.checkts', false],
    ['examples/shop/**/*.check.ts', 'examples/shop/a.check.ts', true],
    ['examples/shop/**/*.check.ts', 'examples/shop/deep/er/a.check.ts', true],
    ['examples/shop/**/*.check.ts', 'examples/shopping/a.check.ts', false],
    ['src/*.check.{ts,js}', 'src/a.check.js', true],
    ['src/*.check.{ts,js}', 'src/b/a.check.js', false],
    ['**/drafts/**', 'x/drafts/a.ts', true],
    ['a?.ts', 'ab.ts', true],
    ['[ab].ts', 'c.ts', false],
    ['[!ab].ts', 'c.ts', true],
    ['file.(x).ts', 'file.(x).ts', true],
  ])('%s matches %s: %s', (glob, file, expected) => {
    expect(globToRegExp(glob).test(file)).toBe(expected)
  })

  it('finds files sorted, honours ignore, and skips node_modules and .git', () => {
    const dir = tempProject(
      {
        'b.check.ts': '',
        'a/z.check.ts': '',
        'a/b.check.ts': '',
        'a/drafts/c.check.ts': '',
        'node_modules/x/d.check.ts': '',
        '.git/e.check.ts': '',
        'other.ts': '',
      },
      { link: false },
    )
    expect(findFiles(dir, ['**/*.check.ts'], ['**/drafts/**'])).toEqual(['a/b.check.ts', 'a/z.check.ts', 'b.check.ts'])
    expect(findFiles(dir, ['./a/*.check.ts', 'b.check.ts'])).toEqual(['a/b.check.ts', 'a/z.check.ts', 'b.check.ts'])
  })
})
