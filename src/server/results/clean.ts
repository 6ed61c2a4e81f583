import { createHash } from 'node:crypto'
import { COMPARISONS } from '../../schema/index.js'

/*
 * Error messages of runs group by their shape: the parts that change from one run to the next
 * (times, ids, addresses, ports, measured numbers) become placeholders before hashing, so
 * "no answer from 10.0.0.1 port 5301 within 1000 ms" and "... 10.0.0.2 port 5302 ..." are one
 * error group. The order matters: the larger shapes go first, so that their digits are not
 * taken for numbers.
 */
const RULES: Array<[RegExp, string]> = [
  // ISO 8601 and "2026-01-02 03:04:05" timestamps
  [/\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?/g, '<timestamp>'],
  // clock times on their own
  [/\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b/g, '<timestamp>'],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<uuid>'],
  // IPv6, with an embedded IPv4 tail, optionally in brackets with a port
  [/\[?(?<![\w:.])(?=[0-9a-f:.]*[0-9a-f])(?:[0-9a-f]{0,4}:){2,7}(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9a-f]{0,4})(?![\w:])(?:%\w+)?(?:\]:\d+|\])?/gi, '<ip>'],
  [/\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b/g, '<ip>'],
  [/\b0x[0-9a-f]+\b/gi, '<hex>'],
  // hex strings: at least 8 hex digits with a digit among them (plain words stay)
  [/\b(?=[a-f]*\d)[0-9a-f]{8,}\b/gi, '<hex>'],
  // other ids: long tokens mixing letters and digits
  [/\b(?=[A-Za-z_-]*\d)(?=[\d_-]*[A-Za-z])[A-Za-z0-9_-]{16,}\b/g, '<id>'],
  // numbers, but not the digits of a word such as IPv4
  [/(?<![A-Za-z_<])[-+]?\d+(?:[.,]\d+)*/g, '<number>'],
]

/*
 * What an assertion expects is part of the error's identity: `STATUS_CODE EQUALS "200"` and
 * `STATUS_CODE EQUALS "201"` are two assertions of the check's own, written once in its
 * configuration, never varying from run to run. So the expectation of a failed assertion's
 * message (src/runner/assertions.ts: `<source>[ <property>] <comparison>[ "<target>"][ <unit>]
 * failed: got <actual>`, each message the whole error or one of its `; `-separated reasons) is
 * kept as written; only what the run got (`got 503`, `got 1234 ms`) is cleaned like any text.
 */
const EXPECTATION = new RegExp(`(?<=^|; )[A-Z][A-Z_]*(?: [^";]*?)? (?:${COMPARISONS.join('|')})(?: "(?:[^"\\\\]|\\\\.)*")?(?: [a-z]+)?(?= failed: got )`, 'g')

/** A stand-in for the n-th kept part that no rule above changes (letters only: no digit, colon or hex). */
const keptMark = (n: number) => `\u0000${'k'.repeat(n + 1)}\u0000`

/** The message with its variable parts replaced by placeholders, whitespace collapsed; assertions' expectations kept. */
export function cleanErrorMessage(message: string): string {
  const kept: string[] = []
  let cleaned = message.replace(/\u0000/g, '').replace(EXPECTATION, (expectation) => keptMark(kept.push(expectation) - 1))
  for (const [pattern, placeholder] of RULES) cleaned = cleaned.replace(pattern, placeholder)
  cleaned = cleaned.replace(/\u0000(k+)\u0000/g, (_mark, ks: string) => kept[ks.length - 1])
  return cleaned.replace(/\s+/g, ' ').trim()
}

/** sha256 (hex) of the cleaned message: the error group's `errorHash`. */
export function errorHash(cleanedMessage: string): string {
  return createHash('sha256').update(cleanedMessage, 'utf8').digest('hex')
}
