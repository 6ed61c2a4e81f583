import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { UserError } from '../../src/errors.js'
import { ProjectError } from '../../src/project/errors.js'
import { ScaffoldError } from '../../src/project/scaffold.js'
import { ApplyLockError } from '../../src/state/process-lock.js'
import { apiErrorFor, NetworkError } from '../../src/api/errors.js'
import { parseFaults } from '../../src/server/faults.js'
import { ApiClient } from '../../src/api/client.js'
import { monitors, STACK_LINE } from '../helpers/cli.js'

describe('UserError: one type for the errors a user can cause', () => {
  it('is the base of every user-causable error class, with an exit code and the problems as data', () => {
    const request = { method: 'GET', path: '/v1/checks' }
    const errors: Error[] = [
      new ProjectError([{ file: 'a.check.ts', construct: 'DnsCheck', logicalId: 'x', field: 'frequency', message: 'must be one of 1, 2' }]),
      new ScaffoldError('exists'),
      new ApplyLockError('held'),
      new NetworkError('Cannot reach', request, 'ECONNREFUSED', false),
      ...[400, 401, 403, 404, 409, 429, 500, 302].map((status) => apiErrorFor(status, request, undefined, {})),
    ]
    for (const error of errors) {
      expect(error).toBeInstanceOf(UserError)
      expect((error as UserError).exitCode).toBe(1)
    }
    expect((errors[0] as UserError).problems).toEqual([expect.objectContaining({ file: 'a.check.ts', field: 'frequency' })])
    expect(() => parseFaults('latency:x')).toThrow(UserError)
    expect(() => new ApiClient({ baseUrl: 'ftp://x', apiKey: 'k', accountId: 'a' })).toThrow(UserError)
  })

  it('classifies an error the bundled CLI gets from the local server as the user’s: one line, exit 1', async () => {
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    const port = (busy.address() as AddressInfo).port
    try {
      const dir = mkdtempSync(join(tmpdir(), 'monitors-usererror-'))
      const result = await monitors(dir, ['server', '--port', String(port), '--db', join(dir, 'x.db'), '--quiet'])
      expect(result.code).toBe(1)
      expect(result.output).toContain(`Error: Cannot listen on 127.0.0.1:${port}: EADDRINUSE`)
      expect(result.output).not.toContain('Internal error')
      expect(result.output).not.toMatch(STACK_LINE)
      const faults = await monitors(dir, ['server', '--port', '0', '--db', join(dir, 'y.db'), '--faults', 'latency:x'])
      expect(faults.code).toBe(1)
      expect(faults.output).toContain('Error: --faults: latency must look like latency:0-200ms')
      expect(faults.output).not.toContain('Internal error')
    } finally {
      busy.close()
    }
  })
})
