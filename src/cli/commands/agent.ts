import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs'
import { io } from '../io.js'
import { parseDuration } from '../../state/process-lock.js'
import { DEFAULT_CONCURRENCY, DEFAULT_HEALTH_PORT, DEFAULT_LEASE_SECONDS, parseLocations, startAgent, type Agent } from '../../agent/index.js'
import { UserError } from '../../errors.js'
import { checkNumber } from '../engine.js'
import type { UidRange } from '../../runner/script/contain.js'
import { uidRangeFromEnv, uidRangeOption } from '../uid-range.js'
import { hideSecretArguments, secretOf } from '../secrets.js'

interface AgentArgs {
  locations?: string[]
  concurrency?: number
  scriptConcurrency?: number
  healthPort?: number
  healthHost?: string
  pollInterval?: string
  lease?: string
  agentId?: string
  apiUrl?: string
  apiKey?: string
  apiKeyFile?: string
  accountId?: string
  insecureHttp?: boolean
  timeout?: number
  privateTargets?: 'allow' | 'deny'
  allowTarget?: string[]
  metricsToken?: string
  metricsTokenFile?: string
  scriptUidRange?: UidRange | 'off'
}

/** `1s`, `500ms`, `2m` (a bare number is seconds); one clear line when it is not a duration. */
function duration(flag: string, text: string): number {
  const ms = parseDuration(text)
  if (ms === undefined) throw new UserError(`${flag} must be a duration such as 1s, 500ms or 2m (got "${text}").`)
  return ms
}

function healthPortFromEnv(env: NodeJS.ProcessEnv): number {
  const text = env.AGENT_HEALTH_PORT
  if (text === undefined || text.trim() === '') return DEFAULT_HEALTH_PORT
  const port = Number(text)
  if (!/^\d+$/.test(text.trim()) || port > 65535) throw new UserError(`AGENT_HEALTH_PORT must be a port number 0-65535 (got "${text}").`)
  return port
}

/**
 * `monitors agent`: a self-hosted agent. It claims the due runs of its locations from the
 * Monitoring API, runs them from this machine, posts their results and serves health probes;
 * SIGTERM or Ctrl-C finishes the runs in flight and posts their results before it exits 0.
 */
/** The start-up line saying how the agent holds the scripts it runs (docs/scripts.md, "The containment"). */
async function containmentLine(option: UidRange | 'off' | null | undefined): Promise<string> {
  const { containment } = await import('../../runner/script/jail.js')
  const { effectiveUidRange } = await import('../../runner/script/contain.js')
  const held = containment()
  const range = effectiveUidRange(option)
  const user = range ? `a uid of its own (uids ${range.first}-${range.last})` : held.root ? 'uid 0 mapped into a user namespace of its own' : "this agent's uid"
  if (held.available)
    return `${`Scripts run contained by bubblewrap ${held.version ?? ''}`.trimEnd()}: each run in a sandbox of its own (${user}, its own PID, mount and network namespaces, a read-only view without this agent's files, a network whose one way out is the egress proxy; docs/scripts.md)`
  return `Scripts are not contained here (${held.problem}): held only by the walls in their own process; Playwright suites run as ${range ? `a user of their own (uids ${range.first}-${range.last})` : "this agent's user, and can read what it can"} (docs/scripts.md)`
}

export const agentCommand = {
  command: 'agent',
  describe: 'Run checks for a Monitoring API server from this machine, for the locations given (a self-hosted agent)',
  builder: (yargs: Argv) =>
    yargs
      .option('locations', { type: 'string', array: true, describe: 'Locations this agent serves, comma-separated (e.g. eu-west-1,us-east-1)' })
      .option('concurrency', {
        type: 'number',
        requiresArg: true,
        coerce: checkNumber('--concurrency', 'a whole number from 1 to 1000', Number.isFinite),
        describe: `Runs at once (default ${DEFAULT_CONCURRENCY})`,
      })
      .option('script-concurrency', {
        type: 'number',
        requiresArg: true,
        coerce: checkNumber('--script-concurrency', 'a whole number from 1 to 1000', Number.isFinite),
        describe:
          'Browser, multi-step and Playwright suite runs at once; the agent holds at most twice as many and claims only other check types past that, so they keep their schedule (default: one per two cores, at least 1)',
      })
      .option('health-port', {
        type: 'number',
        requiresArg: true,
        coerce: checkNumber('--health-port', 'a port number from 0 to 65535, or 0 for a free one', Number.isFinite),
        describe: `Port of the health probes (env AGENT_HEALTH_PORT, default ${DEFAULT_HEALTH_PORT}; 0 picks a free one)`,
      })
      .option('health-host', { type: 'string', describe: 'Address the health probes listen on (default: every interface)' })
      .option('poll-interval', { type: 'string', default: '1s', describe: 'Wait between claims when nothing is due (e.g. 1s, 500ms)' })
      .option('lease', { type: 'string', default: `${DEFAULT_LEASE_SECONDS}s`, describe: 'Lease of each claimed run, 10s to 10m; renewed while the run lasts' })
      .option('agent-id', { type: 'string', describe: 'Name of this agent for the server (default: <hostname>-<pid>)' })
      .option('api-url', { type: 'string', describe: 'Base URL of the Monitoring API (env MONITORING_API_URL)' })
      .option('api-key', {
        type: 'string',
        describe:
          'API key; never printed. On the command line it can be read by every user of the machine (a warning says so): prefer the environment (MONITORING_API_KEY) or --api-key-file',
      })
      .option('api-key-file', { type: 'string', requiresArg: true, describe: 'A file holding the API key, instead of --api-key' })
      .option('account-id', { type: 'string', describe: 'Account id, sent as x-service-account (env MONITORING_ACCOUNT_ID)' })
      .option('insecure-http', {
        type: 'boolean',
        default: false,
        describe: 'Allow a plain http:// API URL to a host other than this machine (the key travels in clear)',
      })
      .option('timeout', {
        type: 'number',
        default: 30,
        requiresArg: true,
        coerce: checkNumber('--timeout', 'a number of seconds above 0 and at most 3600', (n) => n > 0 && n <= 3600),
        describe: 'Seconds to wait for each API answer',
      })
      .option('private-targets', {
        type: 'string',
        choices: ['allow', 'deny'],
        default: 'allow',
        describe: 'Whether checks may reach loopback, private and link-local addresses and this machine (deny refuses them; docs/security.md)',
      })
      .option('allow-target', {
        type: 'string',
        array: true,
        describe: 'An exception to --private-targets deny: an address, a CIDR range or address:port, e.g. 10.0.0.5:8080 (repeatable)',
      })
      .option('metrics-token', {
        type: 'string',
        describe:
          'Bearer token GET /metrics on the health port requires (default none: open like the probes); prefer the environment (AGENT_METRICS_TOKEN) or --metrics-token-file: on the command line it can be read by every user of the machine',
      })
      .option('metrics-token-file', { type: 'string', requiresArg: true, describe: 'A file holding the metrics token, instead of --metrics-token' })
      .option('script-uid-range', {
        type: 'string',
        requiresArg: true,
        coerce: uidRangeOption('--script-uid-range'),
        describe:
          "Uids (and gids) given to script runs (browser, multi-step, suites, API checks' scripts) when the agent is root, one per run at a time, e.g. 200000-200999 (the default); accounts of /etc/passwd are skipped; off runs them as root (env MONITORS_SCRIPT_UID_RANGE)",
      }),
  handler: async (args: ArgumentsCamelCase<AgentArgs>): Promise<number> => {
    const env = io().env
    const apiUrl = args.apiUrl ?? env.MONITORING_API_URL
    const warnings: string[] = []
    const apiKey = secretOf(
      { flag: '--api-key', fileFlag: '--api-key-file', env: 'MONITORING_API_KEY' },
      { flag: args.apiKey, file: args.apiKeyFile, env: env.MONITORING_API_KEY },
      warnings,
    )
    const metricsToken = secretOf(
      { flag: '--metrics-token', fileFlag: '--metrics-token-file', env: 'AGENT_METRICS_TOKEN' },
      { flag: args.metricsToken, file: args.metricsTokenFile, env: env.AGENT_METRICS_TOKEN },
      warnings,
    )
    hideSecretArguments([args.apiKey, args.metricsToken])
    for (const warning of warnings) io().stderr.write(`${warning}\n`)
    if (apiUrl === undefined || apiUrl.trim() === '') {
      throw new UserError('No API URL: set MONITORING_API_URL or pass --api-url (the Monitoring API server the agent takes runs from).')
    }
    if (apiKey === undefined || apiKey.trim() === '') throw new UserError(`No API key for ${apiUrl}: set MONITORING_API_KEY or pass --api-key-file PATH.`)
    const locations = parseLocations(args.locations ?? [])
    const leaseMs = duration('--lease', args.lease ?? `${DEFAULT_LEASE_SECONDS}s`)
    if (leaseMs % 1000 !== 0) throw new UserError(`--lease must be whole seconds, from 10s to 10m (got "${args.lease}").`)
    // handled from the start: a signal during start-up stops the agent as soon as it runs
    let agent: Agent | undefined
    let early: NodeJS.Signals | undefined
    const onSignal = (signal: NodeJS.Signals) => {
      if (!agent) {
        early = signal
        return
      }
      if (!agent.ready()) {
        // a second signal: stop now; the leases of the runs in flight expire and the server runs them again
        io().stderr.write(`${signal} again: stopping now without waiting for ${agent.stats().inFlight} run(s) in flight.\n`)
        agent.abort()
        return
      }
      void agent.stop(signal)
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    try {
      agent = await startAgent({
        apiUrl,
        apiKey,
        accountId: args.accountId ?? (env.MONITORING_ACCOUNT_ID || undefined),
        locations,
        concurrency: args.concurrency ?? DEFAULT_CONCURRENCY,
        scriptConcurrency: args.scriptConcurrency,
        pollIntervalMs: duration('--poll-interval', args.pollInterval ?? '1s'),
        leaseSeconds: leaseMs / 1000,
        healthPort: args.healthPort ?? healthPortFromEnv(env),
        healthHost: args.healthHost,
        agentId: args.agentId,
        insecureHttp: args.insecureHttp,
        timeoutSeconds: args.timeout,
        privateTargets: args.privateTargets,
        allowedTargets: args.allowTarget,
        metricsToken,
        scriptUidRange: args.scriptUidRange ?? uidRangeFromEnv(),
        log: (line) => io().stdout.write(`${line}\n`),
        warn: (line) => io().stderr.write(`${line}\n`),
      })
      const { runtimesSummary } = await import('../../runner/script/runtimes.js')
      io().stdout.write(`${runtimesSummary()}\n`)
      io().stdout.write(`${await containmentLine(args.scriptUidRange ?? uidRangeFromEnv())}\n`)
      if (early) void agent.stop(early)
      const code = await agent.done
      const s = agent.stats()
      io().stdout.write(`Agent stopped: ${s.claimed} claimed, ${s.posted} results posted, ${s.dropped} dropped (lease lost), ${s.lost} not delivered.\n`)
      // results that could not be delivered are not a clean stop
      return code !== 0 ? code : s.lost > 0 ? 1 : 0
    } finally {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
  },
} as unknown as CommandModule<object, AgentArgs>
