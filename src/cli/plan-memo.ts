import { createHash } from 'node:crypto'
import { loadProjectDeferred, type LoadedProject, type Problem } from '../project/index.js'
import { compileCacheDir } from '../project/loader.js'
import { pagesUnchanged } from '../api/paging.js'
import { constructHash, joinHashes, planMemoFile, planMemoKey, readPlanMemo, writePlanMemo } from '../plan/memo.js'
import type { Plan } from '../plan/index.js'
import { emptySecretWarnings, environmentRequest, err, openSessionLazily, type EngineArgs, type Session } from './engine.js'
import { isRemoteTarget } from './target.js'
import { hasJournal, isWrittenForm } from '../state/lock.js'
import { replanEdited } from './plan-memo-edit.js'
import { io } from './io.js'

/** The options of `plan` that change the plan data (the rest only change how it is shown). */
export interface MemoArgs extends EngineArgs {
  adoptExisting?: boolean
  allowDuplicates?: boolean
  out?: string
  cache?: boolean
}

/** What the command printed from the project before the plan, kept with the memo. */
export interface MemoPrinted {
  secretWarnings: string[]
  warnings: Problem[]
}

/** A plan shown again: the plan, what to print before it, and the open session. */
export interface MemoHit {
  plan: Plan
  printed: MemoPrinted
  session: Session
}

/** No memo to use: how to load the project (its check files already ran), the session when it was opened, and how to keep the plan made. */
export interface MemoMiss {
  load: () => Promise<LoadedProject>
  session?: Session
  remember?: (plan: Plan, project: LoadedProject) => void
}

/** What the memo's key is made of: the project loaded up to its constructs' keys, and the target's session with the lock's bytes; or why there is no memo to use. */
async function memoInputs(args: MemoArgs, debug: (line: string) => void, timing: (phase: string) => void) {
  const env = io().env
  let deferred: Awaited<ReturnType<typeof loadProjectDeferred>>
  try {
    deferred = await loadProjectDeferred({ config: args.config, environment: environmentRequest(args), cache: args.cache })
  } catch (error) {
    return { load: () => Promise.reject(error) } as MemoMiss
  }
  const load = () => deferred.finish()
  timing('check files run')
  if (args.cache === false || env.MONITORS_CACHE === '0') return { load }
  if (args.out !== undefined) return debugged(debug, 'not used (--out saves the records read)', { load })
  const parts = deferred.constructsParts()
  if (parts === undefined) return debugged(debug, 'not used (a construct or the config is not plain data, or a check file has a problem)', { load })
  timing('constructs keyed')
  if (!isRemoteTarget(deferred, args, env)) return debugged(debug, 'not used (the embedded server)', { load })
  let session: Session
  let lockText: Buffer | undefined
  try {
    // the lock's bytes are read for the key, and parsed only when the plan is made (a memo of them needs no parse)
    ;({ session, lockBytes: lockText } = await openSessionLazily(deferred as unknown as LoadedProject, args))
  } catch {
    // the same error comes again where the command opens the target
    return { load }
  }
  timing('target and lock')
  return { deferred, load, parts, session, lockText }
}

/**
 * The plan memo (src/plan/memo.ts) of `monitors plan`: the check files run, the constructs'
 * keys, the lock and the options are hashed, and when a plan of those inputs is kept and every
 * list page it read answers 304, it is the plan, without validating a construct or reading a
 * record. Anything else is a miss, and the command goes on as without the memo, with the project
 * loaded once and the session opened once. `--no-cache`, MONITORS_CACHE=0, `--out` (a saved plan
 * fingerprints the records) and the embedded server turn it off; MONITORS_DEBUG_CACHE=1 says
 * whether it was used.
 */
export async function planFromMemo(args: MemoArgs, timing: (phase: string) => void = () => {}): Promise<MemoHit | MemoMiss> {
  const env = io().env
  const debug = (line: string) => {
    if (env.MONITORS_DEBUG_CACHE) err(`plan memo: ${line}\n`)
  }
  const inputs = await memoInputs(args, debug, timing)
  if (!('session' in inputs) || !('parts' in inputs)) return inputs
  const { deferred, load, parts, session, lockText } = inputs
  const { client, lockPath, target, environment } = session.open
  const key = planMemoKey({
    constructs: parts.scope,
    lockPath,
    lock: lockText === undefined ? null : sha256(lockText),
    target,
    environment: environment ?? null,
    apiKey: client.apiKeyHash,
    targets: args.target ?? null,
    adoptExisting: args.adoptExisting === true,
    allowDuplicates: args.allowDuplicates === true,
  })
  const file = planMemoFile(compileCacheDir(deferred.rootDir) || '', deferred.configFile, environment)
  const files = Object.fromEntries([...parts.files].map(([name, { hash }]) => [name, hash]))
  // each file's construct hashes made once: the edited files' are read, then kept
  const hashes = new Map<string, string[]>()
  const hashesOf = (name: string) => {
    let of = hashes.get(name)
    if (!of) hashes.set(name, (of = parts.files.get(name)!.keys.map(constructHash)))
    return of
  }
  const remember = (plan: Plan, project: LoadedProject) => {
    const log = client.readLog
    client.readLog = undefined
    if (log && log.requests === log.pages.length) {
      const constructs = Object.fromEntries([...parts.files.keys()].map((name) => [name, joinHashes(hashesOf(name))]))
      // the lock as this plan read it (journal-free: see below), in the form monitors writes: an edit's plan then reads the entries it needs alone
      const lock = session.lock
      const lockWritten = lockText !== undefined && lock !== undefined && isWrittenForm(lock, lockText)
      writePlanMemo(file, key, {
        pages: log.pages,
        plan,
        printed: { secretWarnings: emptySecretWarnings(project.resources), warnings: project.warnings } satisfies MemoPrinted,
        files,
        constructs,
        lockWritten,
      })
    }
  }
  const miss = (reason: string): MemoMiss => {
    client.readLog = { requests: 0, pages: [] }
    return debugged(debug, `not used (${reason})`, { load, session, remember })
  }
  if (!compileCacheDir(deferred.rootDir)) return miss('no cache folder')
  // an apply running now: the lock is read with its journal, which the key does not cover
  if (hasJournal(lockPath)) return debugged(debug, 'not used (the lock has the journal of an apply)', { load, session })
  const found = readPlanMemo(file, key)
  if ('miss' in found) return miss(found.miss)
  const memo = found.memo
  timing('memo read')
  const edited = editedFiles(memo.files, files)
  // what the plan kept cannot stand for the others' (before any request: a miss reads the lists once)
  const why = edited.size === 0 ? undefined : args.target !== undefined && args.target.length > 0 ? '--target' : undefined
  if (why) return miss(`the code changed, and ${why} plans what depends on it`)
  // the edited files are planned against the lock: parsed now, while the heap is small (the same bytes the key holds),
  // unless the entries they need are read alone from a lock in the form monitors writes
  if (edited.size > 0 && !(memo.lockWritten && lockText)) {
    try {
      void session.lock
    } catch {
      return miss('the lock does not read')
    }
  }
  const pages = await pagesUnchanged(client, memo.pages)
  if (!pages) return miss('a list changed on the server')
  timing('pages asked again')
  // a list version moved with no page changed (a check group written): kept with the new one, so that the next plan asks one page again
  const moved = pages.some((page, i) => page.version !== memo.pages[i].version)
  if (edited.size === 0) {
    if (moved) writePlanMemo(file, key, { ...memo, pages })
    debug(`used (${memo.pages.length} list pages unchanged)`)
    return { plan: memo.plan, printed: memo.printed as MemoPrinted, session }
  }
  const replanned = replanEdited(deferred, memo, edited, { ...parts, hashesOf }, session, args, timing, memo.lockWritten ? lockText : undefined)
  if ('miss' in replanned) return miss(`the code changed in ${edited.size} of ${parts.files.size} check files: ${replanned.miss}`)
  timing('edited files planned')
  const constructs: Record<string, string> = {}
  for (const name of parts.files.keys()) constructs[name] = edited.has(name) ? joinHashes(hashesOf(name)) : memo.constructs[name]
  writePlanMemo(file, key, { ...memo, pages, plan: replanned.plan, printed: replanned.printed, files, constructs })
  debug(`used (${memo.pages.length} list pages unchanged; ${edited.size} of ${parts.files.size} check files planned again)`)
  if (replanned.lockRead === 'entries') debug("the lock's entries of their resources read alone")
  return { plan: replanned.plan, printed: replanned.printed, session }
}

/** The check files whose hash is not the kept one (new files too), and the kept files that are gone. */
function editedFiles(kept: Record<string, string>, now: Record<string, string>): Set<string> {
  const edited = new Set<string>()
  for (const name of Object.keys(now)) if (!Object.hasOwn(kept, name) || kept[name] !== now[name]) edited.add(name)
  for (const name of Object.keys(kept)) if (!Object.hasOwn(now, name)) edited.add(name)
  return edited
}

function debugged<T>(debug: (line: string) => void, line: string, value: T): T {
  debug(line)
  return value
}

function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex')
}
