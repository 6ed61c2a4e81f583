#!/usr/bin/env node
import { main } from '../dist/cli/main.js'

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    process.stderr.write(`monitors: internal error: ${error instanceof Error ? error.message : String(error)}\n`)
    if (process.env.MONITORS_DEBUG) process.stderr.write(`${error instanceof Error ? error.stack : ''}\n`)
    process.exitCode = 1
  },
)
