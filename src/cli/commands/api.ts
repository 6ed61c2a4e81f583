import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { runConsole, type ConsoleArgs } from '../console.js'
import { givenArgument, targetOptions } from '../engine.js'
import { io } from '../io.js'
import type { ApiRequest, Query } from '../../api/client.js'
import { redact } from '../../api/redact.js'
import { UserError } from '../../errors.js'

interface ApiArgs extends Omit<ConsoleArgs, 'format'> {
  method: string
  path: string
  field?: string[]
  rawField?: string[]
  input?: string
  include?: boolean
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const
type Method = (typeof METHODS)[number]

/** A -F value as gh api reads it: true, false, null and numbers as themselves, @file as the file's text, else the text. */
function typed(value: string): unknown {
  if (value === 'true') return true
  if (value === 'false') return false
  if (value === 'null') return null
  if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value)
  if (value.startsWith('@')) return readFileSync(resolve(io().cwd, value.slice(1)), 'utf8')
  return value
}

/** The fields, in order: `key=value`; `key[]=value` adds to a list. */
function fieldsOf(args: ApiArgs): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const add = (flag: string, text: string, raw: boolean) => {
    const at = text.indexOf('=')
    if (at <= 0) throw new UserError(`${flag} ${JSON.stringify(text)} must be key=value.`)
    const key = text.slice(0, at)
    const value = raw ? text.slice(at + 1) : typed(text.slice(at + 1))
    if (key.endsWith('[]')) {
      const list = (out[key.slice(0, -2)] ??= []) as unknown[]
      if (!Array.isArray(list)) throw new UserError(`${flag} ${key}: ${key.slice(0, -2)} is given as a value and as a list.`)
      list.push(value)
    } else out[key] = value
  }
  for (const text of args.field ?? []) add('-F', text, false)
  for (const text of args.rawField ?? []) add('-f', text, true)
  return out
}

/** The request as the arguments say it: the path's own query, the fields as the query of a GET or DELETE (or beside --input), else as the JSON body. */
function requestOf(args: ApiArgs, method: Method): ApiRequest {
  const text = args.path.trim()
  if (/^[a-z][a-z0-9+.-]*:/i.test(text))
    throw new UserError(
      `monitors api takes a path of the target (/v1/checks), not a URL (got ${JSON.stringify(redact(text))}): the key is only ever sent to the target.`,
    )
  const url = new URL(text.startsWith('/') ? text : `/${text}`, 'http://target.invalid')
  if (!url.pathname.startsWith('/v1/') && !/^\/v\d+\//.test(url.pathname))
    throw new UserError(`The path must start with /v1/ (got ${JSON.stringify(text)}), e.g. monitors api GET /v1/checks.`)
  const query: Query = {}
  for (const key of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(key)
    query[key] = values.length === 1 ? values[0] : values
  }
  const given = fieldsOf(args)
  const inQuery = method === 'GET' || method === 'DELETE' || args.input !== undefined
  if (inQuery) for (const [key, value] of Object.entries(given)) query[key] = Array.isArray(value) ? value.map(String) : String(value)
  let body: unknown
  if (args.input !== undefined) {
    // yargs reads a lone - as an empty string
    const stdin = args.input === '-' || (args.input === '' && givenArgument('-'))
    if (args.input === '' && !stdin) throw new UserError('--input is empty: name a file, or - for stdin.')
    const raw = stdin ? readFileSync(0, 'utf8') : readFileSync(resolve(io().cwd, args.input), 'utf8')
    try {
      body = JSON.parse(raw)
    } catch (error) {
      throw new UserError(`--input ${args.input} is not JSON: ${(error as Error).message}`)
    }
  } else if (!inQuery && Object.keys(given).length > 0) body = given
  return { method, path: url.pathname, query, ...(body !== undefined ? { body } : {}), binary: true, anyStatus: true }
}

/**
 * `monitors api METHOD PATH`: one authenticated request to the target, as `gh api` is: its
 * answer on stdout (JSON indented), `--include` its status line and headers first; exit 1 for an
 * answer of 400 or more. A write with a read key is refused before it is sent.
 */
export const apiCommand: Command<ApiArgs> = {
  command: 'api <method> <path>',
  describe: "Send one authenticated request to the target's API (as gh api): -F key=value fields, --input FILE, --include",
  builder: (yargs: Argv) =>
    targetOptions(yargs)
      .positional('method', {
        type: 'string',
        coerce: (m: string) => {
          const up = String(m).toUpperCase()
          if (!(METHODS as readonly string[]).includes(up)) throw new UserError(`The method must be one of ${METHODS.join(', ')} (got ${JSON.stringify(m)}).`)
          return up
        },
        describe: METHODS.join(', '),
      })
      .positional('path', { type: 'string', describe: 'The path, with its query if any: /v1/checks?limit=5' })
      .option('field', {
        alias: 'F',
        type: 'string',
        array: true,
        requiresArg: true,
        describe:
          'key=value: true, false, null and numbers as JSON, @file as its text; in the query of a GET or DELETE, else in the JSON body; key[]=v makes a list',
      })
      .option('raw-field', { alias: 'f', type: 'string', array: true, requiresArg: true, describe: 'key=value, the value always as text' })
      .option('input', { type: 'string', requiresArg: true, describe: 'The JSON body from this file (- for stdin); the fields then go in the query' })
      .option('include', { alias: 'i', type: 'boolean', default: false, describe: 'Print the status line and the headers before the body' })
      .example('$0 api GET /v1/check-statuses', 'every check status of the account')
      .example('$0 api POST /v1/check-sessions/trigger --input trigger.json', 'run checks now')
      .example('$0 api PATCH /v1/error-groups/4f1c… -F archiveForEver=true', 'archive an error group') as never,
  handler: (args) =>
    runConsole(args, async (c) => {
      const method = args.method as Method
      const request = requestOf(args, method)
      if (method !== 'GET') await c.requireWrite(`api ${method}`)
      const answer = await c.client.send<Buffer | unknown>(request)
      const { stdout } = io()
      if (args.include) {
        const headers = Object.entries(answer.headers).flatMap(([name, value]) =>
          Array.isArray(value) ? value.map((v) => `${name}: ${v}`) : value === undefined ? [] : [`${name}: ${value}`],
        )
        stdout.write(`HTTP/1.1 ${answer.status}\n${headers.join('\n')}\n\n`)
      }
      const type = String(answer.headers['content-type'] ?? '')
      const body = answer.body
      if (Buffer.isBuffer(body)) {
        const text = body.toString('utf8')
        let json: unknown
        try {
          json = type.includes('json') ? JSON.parse(text) : undefined
        } catch {
          json = undefined
        }
        // a screenshot or a trace goes out as its bytes
        if (json !== undefined) stdout.write(`${JSON.stringify(json, null, 2)}\n`)
        else stdout.write(/^text\/|json|xml|svg/.test(type) || type === '' ? text : (body as unknown as string))
      } else if (body !== undefined) stdout.write(typeof body === 'string' ? body : `${JSON.stringify(body, null, 2)}\n`)
      return answer.status >= 400 ? 1 : 0
    }),
}
