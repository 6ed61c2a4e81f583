/**
 * Where the CLI writes and what it reads: the process's streams by default, or those given to
 * `main(argv, io)` (tests run the CLI in-process with their own). Every command writes through
 * `io()`, never to process.stdout or process.stderr directly.
 */
export interface TextSink {
  write(text: string): unknown
  /** Set on a terminal. */
  isTTY?: boolean
  columns?: number
}

export interface CliIo {
  stdout: TextSink
  stderr: TextSink
  /** Where a confirmation is read from; without one (or not a terminal) nothing is asked. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean }
  /** Whether stdout is a terminal (colour, prompts); default: stdout.isTTY. */
  isTTY?: boolean
  env: NodeJS.ProcessEnv
  cwd: string
}

export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    // read only when a command asks: opening stdin early could keep the process waiting
    get stdin() {
      return process.stdin
    },
    env: process.env,
    cwd: process.cwd(),
  }
}

let current: CliIo | undefined

/** The io of the command running now (the process's outside `main`). */
export function io(): CliIo {
  return current ?? processIo()
}

export function stdoutIsTTY(): boolean {
  const { isTTY, stdout } = io()
  return isTTY ?? stdout.isTTY === true
}

/**
 * Runs `body` with `given` as the io. A working directory or environment other than the
 * process's is applied to the process for the run (check files read `process.env` and resolve
 * paths from the working directory) and restored afterwards.
 */
export async function withIo<T>(given: Partial<CliIo>, body: () => Promise<T>): Promise<T> {
  const next = processIo()
  for (const [key, value] of Object.entries(given)) {
    if (value !== undefined) Object.defineProperty(next, key, { value, enumerable: true, configurable: true, writable: true })
  }
  const previous = current
  const savedCwd = process.cwd()
  const savedEnv = next.env !== process.env ? { ...process.env } : undefined
  if (savedEnv) replaceEnv(next.env)
  if (next.cwd !== savedCwd) process.chdir(next.cwd)
  next.env = process.env
  next.cwd = process.cwd()
  current = next
  try {
    return await body()
  } finally {
    current = previous
    if (process.cwd() !== savedCwd) process.chdir(savedCwd)
    if (savedEnv) replaceEnv(savedEnv)
  }
}

function replaceEnv(env: NodeJS.ProcessEnv): void {
  const wanted = { ...env }
  for (const key of Object.keys(process.env)) if (!(key in wanted) || wanted[key] === undefined) delete process.env[key]
  for (const [key, value] of Object.entries(wanted)) if (value !== undefined) process.env[key] = value
}
