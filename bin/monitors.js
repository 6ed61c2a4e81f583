#!/usr/bin/env node
// The command is bin/monitors.cjs (a CommonJS script, which Node starts without its ES module
// loader). This file keeps links and scripts made for the command's former name working: npx
// keeps the bin links it made for a checkout, and some pipelines call this path directly.
import { createRequire } from 'node:module'

createRequire(import.meta.url)('./monitors.cjs')
