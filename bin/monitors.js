#!/usr/bin/env node
import { readFileSync } from 'node:fs'

const argv = process.argv.slice(2)

/**
 * `monitors --version` answers from the package.json beside this file without loading the CLI
 * bundle, whose start-up would be most of the time a version check takes. Undefined when that
 * file cannot be read: the CLI then finds the version its own way.
 */
function ownVersion() {
  try {
    const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version
    return typeof version === 'string' && version !== '' ? version : undefined
  } catch {
    return undefined
  }
}

const version = argv.length === 1 && argv[0] === '--version' ? ownVersion() : undefined
if (version !== undefined) process.stdout.write(`${version}\n`)
else runCli()

async function runCli() {
  const { main } = await import('../dist/cli/main.js')
  return main(argv).then(
    (code) => {
      process.exitCode = code
    },
    (error) => {
      process.stderr.write(`monitors: internal error: ${error instanceof Error ? error.message : String(error)}\n`)
      if (process.env.MONITORS_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`)
      process.exitCode = 1
    },
  )
}
