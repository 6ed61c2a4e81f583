/**
 * The agent's health probes (spec, "Agent health probes") and its command line: what a
 * prober and a user see, from the built CLI. No server is needed for these: the agent keeps
 * trying to claim from an address where nothing listens, and its probes answer meanwhile.
 */
import { createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { monitors, STACK_LINE } from '../helpers/cli.js'
import { probe, spawnAgent, type AgentProcess } from './helpers.js'
import { startAgent } from '../../src/agent/index.js'
import { startTestServer } from '../server/helpers.js'

/** An address where nothing listens: claims fail with "connection refused". */
async function deadUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

async function freePort(): Promise<number> {
  const url = await deadUrl()
  return Number(new URL(url).port)
}

const running: AgentProcess[] = []
afterEach(async () => {
  for (const agent of running.splice(0)) {
    if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL')
    await agent.exited
  }
})

describe('monitors agent: health probes', () => {
  it('answers 200 OK on /-/readiness, /-/liveness and /health, 404 elsewhere, in plain text', async () => {
    const agent = spawnAgent(['--locations', 'eu-west-1', '--health-port', '0', '--poll-interval', '200ms'], {
      MONITORING_API_URL: await deadUrl(),
      MONITORING_API_KEY: 'some-key',
    })
    running.push(agent)
    const port = await agent.healthPort()
    expect(port).toBeGreaterThan(0)
    for (const path of ['/-/readiness', '/-/liveness', '/health']) {
      const answer = await probe(port, path)
      expect(answer, path).toMatchObject({ status: 200, text: 'OK\n' })
      expect(answer.contentType).toMatch(/^text\/plain/)
    }
    for (const path of ['/', '/ready', '/-/other', '/v1/agent/claim', '/health/x']) {
      expect((await probe(port, path)).status, path).toBe(404)
    }
    expect((await probe(port, '/health', 'POST')).status).toBe(405)
    expect((await probe(port, '/-/readiness', 'HEAD')).status).toBe(200)
    // the server being unreachable is reported, and the agent keeps trying (still live)
    await agent.waitFor(/Claiming runs failed: Cannot reach .*connection refused/)
    expect((await probe(port, '/-/liveness')).status).toBe(200)

    agent.child.kill('SIGTERM')
    const { code } = await agent.exited
    expect(code).toBe(0)
    expect(agent.stdout()).toMatch(/SIGTERM: shutting down: no more claims, readiness 503; finishing 0 runs in flight/)
    expect(agent.stdout()).toMatch(/Agent stopped: 0 claimed, 0 results posted/)
    // the probes are gone with the process
    await expect(probe(port, '/health')).rejects.toThrow()
  })

  it('listens on AGENT_HEALTH_PORT, and --health-port wins over it', async () => {
    const url = await deadUrl()
    const fromEnv = await freePort()
    const agent = spawnAgent(['--locations', 'us-east-1'], { MONITORING_API_URL: url, MONITORING_API_KEY: 'k', AGENT_HEALTH_PORT: String(fromEnv) })
    running.push(agent)
    expect(await agent.healthPort()).toBe(fromEnv)
    expect((await probe(fromEnv, '/health')).text).toBe('OK\n')
    agent.child.kill('SIGINT')
    expect((await agent.exited).code).toBe(0)

    const flag = await freePort()
    const second = spawnAgent(['--locations', 'us-east-1', '--health-port', String(flag)], {
      MONITORING_API_URL: url,
      MONITORING_API_KEY: 'k',
      AGENT_HEALTH_PORT: String(fromEnv),
    })
    running.push(second)
    expect(await second.healthPort()).toBe(flag)
    second.child.kill('SIGTERM')
    expect((await second.exited).code).toBe(0)
  })

  it('says so in one line when the health port is taken', async () => {
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, resolve))
    const port = (holder.address() as { port: number }).port
    try {
      const agent = spawnAgent(['--locations', 'eu-west-1', '--health-port', String(port)], { MONITORING_API_URL: await deadUrl(), MONITORING_API_KEY: 'k' })
      running.push(agent)
      const { code } = await agent.exited
      expect(code).toBe(1)
      expect(agent.stderr()).toContain(`The health port ${port} is in use: pass --health-port (0 picks a free one) or set AGENT_HEALTH_PORT.`)
      expect(agent.output()).not.toMatch(STACK_LINE)
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()))
    }
  })

  it('startAgent: not ready from the moment shutdown starts, and stop() resolves with exit code 0', async () => {
    const lines: string[] = []
    const agent = await startAgent({
      apiUrl: await deadUrl(),
      apiKey: 'k',
      locations: ['eu-west-1'],
      healthPort: 0,
      healthHost: '127.0.0.1',
      pollIntervalMs: 100,
      log: (l) => lines.push(l),
      warn: (l) => lines.push(l),
    })
    expect((await probe(agent.healthPort, '/-/readiness')).status).toBe(200)
    const stopped = agent.stop('test')
    // nothing is in flight, so the stop is quick; the flag flips at once
    expect(agent.ready()).toBe(false)
    expect(await stopped).toBe(0)
    expect(lines.join('\n')).toMatch(/test: shutting down/)
  })
})

describe('monitors agent: what it refuses', () => {
  const dir = process.cwd()

  it('refuses to start without an API URL or key, in one line', async () => {
    const noUrl = await monitors(dir, ['agent', '--locations', 'eu-west-1'])
    expect(noUrl.code).toBe(1)
    expect(noUrl.stderr.trim()).toBe('Error: No API URL: set MONITORING_API_URL or pass --api-url (the Monitoring API server the agent takes runs from).')

    const noKey = await monitors(dir, ['agent', '--locations', 'eu-west-1', '--api-url', 'http://127.0.0.1:9'])
    expect(noKey.code).toBe(1)
    expect(noKey.stderr.trim()).toBe('Error: No API key for http://127.0.0.1:9: set MONITORING_API_KEY or pass --api-key-file PATH.')
  })

  it("refuses a location outside the spec's list that cannot be a private location's slug, and no location at all", async () => {
    const env = { MONITORING_API_URL: 'http://127.0.0.1:9', MONITORING_API_KEY: 'k' }
    const bad = await monitors(dir, ['agent', '--locations', 'eu-west-1,mars_1'], env)
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('--locations: "mars_1" is not a location. Allowed: us-east-1, us-east-2,')
    expect(bad.stderr).toContain('af-south-1, or the slugName of a private location (1 to 30 letters, digits and hyphens).')
    expect(bad.output).not.toMatch(STACK_LINE)

    const none = await monitors(dir, ['agent'], env)
    expect(none.code).toBe(1)
    expect(none.stderr).toContain('No location: pass --locations with one or more of us-east-1')
  })

  it('refuses bad numbers and durations in one line', async () => {
    const env = { MONITORING_API_URL: 'http://127.0.0.1:9', MONITORING_API_KEY: 'k' }
    const cases: Array<[string[], string]> = [
      [['--concurrency', '0'], '--concurrency must be a whole number from 1 to 1000 (got 0).'],
      [['--poll-interval', 'soon'], '--poll-interval must be a duration such as 1s, 500ms or 2m (got "soon").'],
      [['--lease', '5s'], '--lease must be a whole number of seconds from 10 to 600 (got 5).'],
      [['--health-port', '70000'], '--health-port must be 0-65535 (0 picks a free port), got 70000.'],
    ]
    for (const [flags, message] of cases) {
      const result = await monitors(dir, ['agent', '--locations', 'eu-west-1', ...flags], env)
      expect(result.code, flags.join(' ')).toBe(1)
      expect(result.stderr.trim()).toBe(`Error: ${message}`)
    }
    const badEnv = await monitors(dir, ['agent', '--locations', 'eu-west-1'], { ...env, AGENT_HEALTH_PORT: 'eighty' })
    expect(badEnv.code).toBe(1)
    expect(badEnv.stderr.trim()).toBe('Error: AGENT_HEALTH_PORT must be a port number 0-65535 (got "eighty").')
  })

  it('stops with exit 1 when the server refuses its key, saying why in one line', async () => {
    const server = await startTestServer()
    try {
      const agent = spawnAgent(['--locations', 'eu-west-1', '--health-port', '0'], { MONITORING_API_URL: server.url, MONITORING_API_KEY: 'not-a-known-key' })
      running.push(agent)
      const { code } = await agent.exited
      expect(code).toBe(1)
      const refused = agent
        .stderr()
        .split('\n')
        .filter((l) => l.includes('Claiming runs was refused'))
      expect(refused).toHaveLength(1)
      expect(refused[0]).toMatch(
        /POST \/v1\/agent\/claim was refused \(401 .*\): the API key is missing or invalid\. Set MONITORING_API_KEY or pass --api-key\. Stopping\.$/,
      )
      expect(agent.output()).not.toContain('not-a-known-key')
      expect(agent.output()).not.toMatch(STACK_LINE)
    } finally {
      await server.close()
    }
  })
})
