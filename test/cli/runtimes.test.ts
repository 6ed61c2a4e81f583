/**
 * `monitors runtimes` lists the script runtimes and whether each is prepared in a cache folder;
 * `monitors runtimes prepare` installs one (here without the network: npm's cache and the
 * project's lock, as the tests prepare theirs). A server or agent that starts names the command
 * that prepares what is missing.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { monitors, monitorsProcess, repo, STACK_LINE } from '../helpers/cli.js'
import { spawnMonitors } from '../agent/helpers.js'
import { RUNTIME_IDS } from '../../src/schema/index.js'

const folders: string[] = []
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'monitors-runtimes-cli-'))
  folders.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of folders) rmSync(dir, { recursive: true, force: true })
})
const lock = join(repo, 'package-lock.json')

describe('monitors runtimes', () => {
  it('lists every runtime with its stage, state and folder, and names the command that prepares one', async () => {
    const cache = fresh()
    const text = await monitors(repo, ['runtimes', '--cache-dir', cache])
    expect(text.code, text.output).toBe(0)
    const lines = text.stdout.split('\n')
    expect(lines[0]).toBe(`Runtimes in ${cache}:`)
    expect(lines[1]).toMatch(/^Runtime\s+Stage\s+State\s+Folder$/)
    expect(lines[2]).toMatch(new RegExp(`^2025\\.04 \\(default\\)\\s+CURRENT\\s+not prepared\\s+${join(cache, '2025.04')}$`))
    expect(lines.find((l) => l.startsWith('2022.10'))).toMatch(/REMOVED\s+removed \(cannot run\)/)
    expect(text.stdout).toContain(`monitors runtimes prepare 2025.04 --cache-dir ${cache}`)

    const json = await monitors(repo, ['runtimes', 'list', '--cache-dir', cache, '--format', 'json'])
    expect(json.code, json.output).toBe(0)
    const doc = JSON.parse(json.stdout)
    expect(doc).toMatchObject({ formatVersion: 1, cacheDir: cache, defaultRuntimeId: '2025.04' })
    expect(doc.runtimes.map((r: { id: string }) => r.id)).toEqual([...RUNTIME_IDS])
    expect(doc.runtimes[1]).toMatchObject({
      id: '2024.09',
      stage: 'STABLE',
      prepared: false,
      dir: join(cache, '2024.09'),
      prepareCommand: `monitors runtimes prepare 2024.09 --cache-dir ${cache}`,
    })
    expect(doc.runtimes[5]).toMatchObject({
      id: '2022.10',
      stage: 'REMOVED',
      prepared: false,
      prepareCommand: null,
      missing: 'runtime 2022.10 was removed on 2024-10-31: choose runtime 2025.04',
    })
  })

  it('prepares the newest runtime by default (offline, versions from a lock), then says it is prepared; --force prepares it again', async () => {
    const cache = fresh()
    const first = await monitorsProcess(repo, ['runtimes', 'prepare', '--cache-dir', cache, '--offline', '--from-lock', 'package-lock.json'])
    expect(first.code, first.output).toBe(0)
    expect(first.stdout).toContain(`Preparing runtime 2025.04 in ${cache} (offline: from npm's cache)`)
    expect(first.stdout).toMatch(/^ {2}npm ci .*--offline \(8 packages, versions from .*package-lock\.json\)$/m)
    expect(first.stdout).toMatch(new RegExp(`^Runtime 2025\\.04 prepared in ${join(cache, '2025.04')} \\(\\d+\\.\\d s\\)$`, 'm'))
    expect(readdirSync(cache)).toEqual(['2025.04'])

    const list = await monitors(repo, ['runtimes', '--cache-dir', cache, '--format', 'json'])
    expect(JSON.parse(list.stdout).runtimes[0]).toMatchObject({ id: '2025.04', prepared: true, missing: null, prepareCommand: null })

    const again = await monitors(repo, ['runtimes', 'prepare', '2025.04', '--cache-dir', cache, '--offline', '--from-lock', lock])
    expect(again.code, again.output).toBe(0)
    expect(again.stdout).toContain(`Runtime 2025.04 is already prepared in ${join(cache, '2025.04')} (--force prepares it again)`)
    expect(again.stdout).not.toContain('npm ci')

    const forced = await monitors(repo, ['runtimes', 'prepare', '2025.04', '--cache-dir', cache, '--offline', '--from-lock', lock, '--force'])
    expect(forced.code, forced.output).toBe(0)
    expect(forced.stdout).toMatch(/npm ci .*\nRuntime 2025\.04 prepared in /)
  }, 300_000)

  it('refuses an unknown runtime (naming the runtimes) and a removed one, preparing none of the ids given', async () => {
    const cache = fresh()
    const result = await monitors(repo, ['runtimes', 'prepare', '2025.04', '2099.01', '2022.10', '--cache-dir', cache, '--offline', '--from-lock', lock])
    expect(result.code).toBe(1)
    expect(result.stderr).toBe(
      'Error: runtime 2099.01 does not exist (runtimes: 2025.04, 2024.09, 2024.02, 2023.09, 2023.02, 2022.10); ' +
        'runtime 2022.10 was removed on 2024-10-31: choose runtime 2025.04. Nothing was prepared.\n',
    )
    expect(readdirSync(cache)).toEqual([])
    const action = await monitors(repo, ['runtimes', '2025.04'])
    expect(action.code).toBe(1)
    expect(action.stderr).toContain('unknown action "2025.04"; use list or prepare (to prepare it: monitors runtimes prepare 2025.04)')
  })

  it('says what npm said when npm fails (no stack), leaves nothing behind and exits 1', async () => {
    const cache = fresh()
    // 2024.09's packages are in no cache of this machine, and --offline forbids the registry
    const result = await monitorsProcess(repo, ['runtimes', 'prepare', '2024.09', '--cache-dir', cache, '--offline'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^Error: preparing runtime 2024\.09: npm install .*--offline failed \(exit 1\): npm error code ENOTCACHED\n/)
    expect(result.stderr).toContain('1 of 1 runtime(s) could not be prepared.')
    expect(result.output).not.toMatch(STACK_LINE)
    expect(readdirSync(cache)).toEqual([])
    const missingLock = await monitors(repo, ['runtimes', 'prepare', '--cache-dir', cache, '--offline', '--from-lock', 'no-such-lock.json'])
    expect(missingLock.code).toBe(1)
    expect(missingLock.stderr).toMatch(/^Error: cannot read the lock .*no-such-lock\.json: ENOENT/)
    expect(missingLock.output).not.toMatch(STACK_LINE)
  }, 120_000)

  it('a server and an agent name, as they start, the command that prepares a missing runtime; run, it prepares it', async () => {
    const cache = fresh()
    const start = async () => {
      const server = spawnMonitors(['server', '--port', '0', '--db', ':memory:', '--quiet', '--runtime-cache', cache])
      const url = (await server.waitFor(/listening on (http:\/\/\S+)/))[1]
      const key = (await server.waitFor(/API key \(shown once, only its hash is kept\): (\S+)/))[1]
      return { server, url, key }
    }
    const { server, url, key } = await start()
    // each line of the server's log begins with its ISO time
    const line = server
      .stdout()
      .split('\n')
      .map((l) => l.replace(/^[\dT:.-]+Z /, ''))
      .find((l) => l.startsWith('Script runtimes'))
    expect(line).toBe(
      `Script runtimes in ${cache}: none prepared; browser and multi-step checks on a runtime not prepared fail until it is: monitors runtimes prepare 2025.04 --cache-dir ${cache}`,
    )
    const agent = spawnMonitors(['agent', '--locations', 'eu-west-1', '--health-port', '0', '--api-url', url, '--api-key', key], {
      MONITORS_RUNTIME_CACHE: cache,
    })
    try {
      await agent.waitFor(/^Script runtimes in .*$/m)
      expect(agent.stdout()).toContain(
        `Script runtimes in ${cache}: none prepared; browser and multi-step checks on a runtime not prepared fail until it is: monitors runtimes prepare 2025.04 --cache-dir ${cache}`,
      )
    } finally {
      agent.child.kill('SIGTERM')
      server.child.kill('SIGTERM')
      await Promise.all([agent.exited, server.exited])
    }

    const command = (line as string).slice(line!.indexOf('monitors runtimes prepare') + 'monitors '.length).split(' ')
    const prepared = await monitors(repo, [...command, '--offline', '--from-lock', lock])
    expect(prepared.code, prepared.output).toBe(0)
    expect(existsSync(join(cache, '2025.04', '.monitors-runtime.json'))).toBe(true)
    const again = await start()
    try {
      expect(again.server.stdout()).toMatch(
        new RegExp(
          `^[\\dT:.-]+Z Script runtimes in ${cache}: 2025\\.04 prepared, 2024\\.09, 2024\\.02, 2023\\.09 not; .*monitors runtimes prepare 2024\\.09 --cache-dir ${cache}$`,
          'm',
        ),
      )
    } finally {
      again.server.child.kill('SIGTERM')
      await again.server.exited
    }
  }, 300_000)
})
