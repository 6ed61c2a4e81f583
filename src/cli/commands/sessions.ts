import type { Argv } from 'yargs'
import type { Command } from '../command.js'
import { checkNumber, err } from '../engine.js'
import { consoleOptions, ms, runConsole, when, type Console, type ConsoleArgs } from '../console.js'
import { fields, stateColor, table, title, type Column, type View } from '../view.js'
import { getSession, waitForSession, type CheckSession, type SessionResult } from '../../api/account.js'
import { UserError } from '../../errors.js'

interface SessionsArgs extends ConsoleArgs {
  action: 'get'
  id?: string
  watch?: boolean
  maxWait: number
}

const FAILING = new Set(['FAILED', 'TIMED_OUT'])
const resultState = (r: SessionResult) => r.status ?? (r.hasFailures || r.hasErrors ? 'FAILED' : r.isDegraded ? 'DEGRADED' : 'PASSED')

function sessionView(session: CheckSession): View {
  const columns: Column<SessionResult>[] = [
    { head: 'LOCATION', value: (r) => r.runLocation },
    { head: 'TYPE', value: (r) => r.resultType, optional: true },
    { head: 'STATUS', value: resultState, paint: (r) => stateColor(resultState(r)) },
    { head: 'TIME', value: (r) => ms(r.responseTime), right: true },
    { head: 'RESULT', value: (r) => r.checkResultId, id: true },
    { head: 'ERROR', value: (r) => (r.error ?? '').split('\n')[0], shrink: true },
  ]
  const finals = session.results.filter((r) => r.resultType !== 'ATTEMPT').length
  return {
    blocks: [
      title(`Session ${session.checkSessionId} of ${JSON.stringify(session.name)}`),
      fields([
        ['Status', session.status],
        ['Check', session.checkId],
        ['Type', session.checkType],
        ['Started', session.startedAt ? `${when(session.startedAt)} UTC` : undefined],
        ['Stopped', session.stoppedAt ? `${when(session.stoppedAt)} UTC` : undefined],
        ['Elapsed', ms(session.timeElapsed)],
        ['Locations', `${session.runLocations.join(', ')} (${finals} of ${session.runLocations.length} done)`],
      ]),
      table(columns, session.results, { title: 'Results', empty: 'No result yet.' }),
    ],
    json: { session },
  }
}

/** Waits for the session to finish (--watch), saying on stderr each result as it comes. */
async function watch(c: Console, session: CheckSession, maxWaitSeconds: number): Promise<CheckSession> {
  if (session.status !== 'RUNNING') return session
  const seen = new Set(session.results.map((r) => r.checkResultId))
  const say = (results: SessionResult[]) => {
    for (const r of results) {
      if (seen.has(r.checkResultId)) continue
      seen.add(r.checkResultId)
      err(`${r.runLocation}: ${resultState(r)} ${ms(r.responseTime)}${r.error ? `: ${r.error.split('\n')[0]}` : ''}\n`)
    }
  }
  err(`Waiting for session ${session.checkSessionId} (${session.runLocations.join(', ')}); at most ${maxWaitSeconds} s.\n`)
  // asked again every few seconds, so that each result is said as it comes
  const done = await waitForSession(c.client, session.checkSessionId, Date.now() + maxWaitSeconds * 1000, {
    hold: 5,
    waiting: async () => say((await getSession(c.client, session.checkSessionId)).results),
  })
  if (!done)
    throw new UserError(
      `Session ${session.checkSessionId} has not finished within --max-wait ${maxWaitSeconds} s (monitors sessions get ${session.checkSessionId} shows it so far).`,
    )
  say(done.results)
  return done
}

/**
 * `monitors sessions get ID [--watch]`: a check session (GET /v1/check-sessions/{id}), as
 * `monitors trigger` starts them; with --watch, waited for (GET …/completion) and exit 1 when it
 * failed.
 */
export const sessionsCommand: Command<SessionsArgs> = {
  command: 'sessions <action> [id]',
  describe: 'Show a check session (as trigger starts them) and its results; --watch waits for it to finish',
  builder: (yargs: Argv) =>
    consoleOptions(yargs)
      .positional('action', { choices: ['get'] as const, describe: 'get a session' })
      .positional('id', { type: 'string', describe: "The session's id (checkSessionId, as trigger --format json and a result show it)" })
      .option('watch', {
        type: 'boolean',
        default: false,
        describe: 'Wait until the session finishes, saying each result as it comes (stderr); exit 1 when it failed',
      })
      .option('max-wait', {
        type: 'number',
        default: 600,
        requiresArg: true,
        coerce: checkNumber('--max-wait', 'a number of seconds from 1 to 3600', (n) => n >= 1 && n <= 3600),
        describe: '--watch: seconds to wait at most',
      })
      .example('$0 sessions get 3f0c…-… --watch', 'wait for a triggered run and show its results') as never,
  handler: (args) =>
    runConsole(args, async (c) => {
      if (!args.id) throw new UserError('monitors sessions get needs the session id (checkSessionId).')
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(args.id)) {
        throw new UserError(
          `${JSON.stringify(args.id)} is not a whole session id: give all of it (there is no list of sessions to find the start of an id in; trigger --format json and a result's Session show it).`,
        )
      }
      let session = await getSession(c.client, args.id)
      if (args.watch) session = await watch(c, session, args.maxWait)
      c.show(sessionView(session))
      return args.watch && FAILING.has(session.status) ? 1 : 0
    }),
}
