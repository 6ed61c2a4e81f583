/*
 * The lines `monitors server` writes: each begins with its time (ISO 8601, UTC, ms), or is one
 * JSON object a line (`--log-format json`): {"time", "level", "msg"}. `info` lines are the
 * start-up lines and one per request; `warn` lines are what goes wrong (the database away or
 * its pool saturated, internal errors, the scheduler's and the alert sender's problems).
 */

import type { Clock } from '../runner/clock.js'

export const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export type LogLevel = 'info' | 'warn'

export function isLogFormat(value: unknown): value is LogFormat {
  return typeof value === 'string' && (LOG_FORMATS as readonly string[]).includes(value)
}

/** One line as written (without its newline). */
export function formatLogLine(format: LogFormat, level: LogLevel, text: string, at: Date): string {
  // a warning shared with the commands that print it bare says "Warning:"; the level says it here
  const message = level === 'warn' ? text.replace(/^Warning: /, '') : text
  if (format === 'json') return JSON.stringify({ time: at.toISOString(), level, msg: message })
  // a message of several lines (a stack) stays one entry: its later lines are indented
  return `${at.toISOString()} ${level === 'warn' ? 'WARN ' : ''}${message.replace(/\n/g, '\n    ')}`
}

export interface ServerLogger {
  info(line: string): void
  warn(line: string): void
}

/** A logger writing formatted lines to `out` (info) and `err` (warn), each dated on `clock`. */
export function serverLogger(format: LogFormat, out: (text: string) => void, err: (text: string) => void, clock: Clock): ServerLogger {
  return {
    info: (line) => out(`${formatLogLine(format, 'info', line, new Date(clock.now()))}\n`),
    warn: (line) => err(`${formatLogLine(format, 'warn', line, new Date(clock.now()))}\n`),
  }
}
