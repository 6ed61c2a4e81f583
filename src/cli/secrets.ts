/**
 * Secrets given to a long-running command (keys, tokens, database and SMTP passwords): from the
 * environment or a file, never from the command line if it can be helped. A process's arguments
 * are world-readable (`/proc/<pid>/cmdline`, `ps`), so a Playwright suite running as a user of
 * its own on the same machine could read them; its environment is readable by its own user only.
 * A secret given on the command line still works: a warning at start names the flag and the safer
 * way, and the process's title is rewritten without it as soon as it is read.
 */
import { readFileSync, statSync } from 'node:fs'
import { io } from './io.js'
import { UserError } from '../errors.js'

/** The contents of a secret's file (`--…-file PATH`), its last line break removed; a UserError naming the flag when it cannot be read. */
export function readSecretFile(file: string, flag: string): string {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new UserError(`${flag} ${file} cannot be read (${code ?? (error as Error).message}): give a file holding the secret alone, readable by this user`)
  }
  const value = text.replace(/\r?\n$/, '')
  if (value.trim() === '') throw new UserError(`${flag} ${file} is empty: it must hold the secret`)
  try {
    const mode = statSync(file).mode & 0o777
    if (mode & 0o044) io().stderr.write(`Warning: ${flag} ${file} can be read by other users of this machine (mode ${mode.toString(8)}): chmod 600 ${file}\n`)
  } catch {
    /* read above: gone since */
  }
  return value
}

/** The warning for a secret given on the command line: where it can be read, and the safer ways. */
export function commandLineWarning(flag: string, safer: string): string {
  return `Warning: ${flag} puts a secret in this process's arguments, which every user of this machine can read (ps, /proc/<pid>/cmdline): ${safer} instead`
}

export interface SecretSource {
  /** the flag's value (`--metrics-token T`) */
  flag?: string
  /** the file flag's path (`--metrics-token-file PATH`) */
  file?: string
  /** the environment variable's value */
  env?: string
}

/**
 * One secret from its three sources: the flag (a warning), the file, the environment, in that
 * order; undefined when none gives one. Giving the flag and the file is a UserError.
 */
export function secretOf(names: { flag: string; fileFlag: string; env: string }, given: SecretSource, warnings: string[]): string | undefined {
  if (given.flag !== undefined && given.flag !== '' && given.file !== undefined) throw new UserError(`Give ${names.flag} or ${names.fileFlag}, not both`)
  if (given.flag) {
    warnings.push(commandLineWarning(names.flag, `give it in ${names.env} or ${names.fileFlag} PATH`))
    return given.flag
  }
  if (given.file !== undefined) return readSecretFile(given.file, names.fileFlag)
  return given.env || undefined
}

/** The password of a postgres:// or smtp:// URL as written in it (percent-encoded), or undefined when it holds none. */
export function urlPassword(url: string): string | undefined {
  return /^[a-z][a-z0-9+.-]*:\/\/[^:/@]*:([^@/]+)@/i.exec(url)?.[1]
}

/**
 * Rewrites this process's title (what `ps` and /proc/<pid>/cmdline show) with every secret
 * given on its command line replaced by `***`. Only where the process's own arguments hold one
 * (the CLI run in-process by tests leaves its host alone).
 */
export function hideSecretArguments(secrets: ReadonlyArray<string | undefined>): void {
  const values = secrets.filter((s): s is string => typeof s === 'string' && s.length > 0)
  const args = process.argv
  if (!values.some((value) => args.some((arg) => arg.includes(value)))) return
  const masked = args.map((arg) => values.reduce((text, value) => text.split(value).join('***'), arg))
  try {
    process.title = masked.join(' ')
  } catch {
    /* a platform without a writable title: the warning said it */
  }
}
