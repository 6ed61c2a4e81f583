/**
 * The TCP runner against real TCP servers the test starts on 127.0.0.1 (and ::1): connect, send,
 * read up to the bound, timings, assertions, thresholds, network errors and the private-target
 * policy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { tcpCheckSchema, type TcpCheckInput } from '../../src/schema/tcp-check.js'
import { MAX_TCP_RESPONSE_BYTES, runCheck, type RunOptions, type TcpDetails } from '../../src/runner/index.js'

interface Listening {
  server: Server
  port: number
  received: string[]
}

/** A TCP server on `host`: `onConnect` gets each socket and what it has received so far. */
async function listen(host: string, onConnect: (socket: Socket, received: string[]) => void): Promise<Listening> {
  const received: string[] = []
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    onConnect(socket, received)
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const close = server.close.bind(server)
  server.close = ((cb?: (err?: Error) => void) => {
    for (const s of sockets) s.destroy()
    return close(cb)
  }) as Server['close']
  return { server, port: (server.address() as AddressInfo).port, received }
}

let echo: Listening // answers `+<data>` and keeps the connection open
let banner: Listening // greets on connect, sends nothing else
let closer: Listening // answers and closes
let slow: Listening // answers after 1.5 s
let silent: Listening // never answers
let big: Listening // answers 100 KiB
let echo6: Listening | undefined

beforeAll(async () => {
  echo = await listen('127.0.0.1', (socket, received) =>
    socket.on('data', (chunk) => {
      received.push(chunk.toString())
      socket.write(`+${chunk.toString().trim()}\r\n`)
    }),
  )
  banner = await listen('127.0.0.1', (socket) => socket.write('220 mail.local ESMTP ready\r\n'))
  closer = await listen('127.0.0.1', (socket) => socket.on('data', () => socket.end('BYE\n')))
  slow = await listen('127.0.0.1', (socket) => socket.on('data', () => setTimeout(() => socket.write('late\n'), 1500)))
  silent = await listen('127.0.0.1', () => {})
  big = await listen('127.0.0.1', (socket) => socket.on('data', () => socket.write(Buffer.alloc(100 * 1024, 'x'))))
  try {
    echo6 = await listen('::1', (socket) => socket.on('data', (chunk) => socket.write(`v6:${chunk.toString()}`)))
  } catch {
    echo6 = undefined
  }
})

afterAll(async () => {
  for (const s of [echo, banner, closer, slow, silent, big, echo6]) if (s) await new Promise((r) => s.server.close(r))
})

type Request = TcpCheckInput['request']

async function run(request: Partial<Request> & { port: number }, rest: Partial<TcpCheckInput> = {}, options: RunOptions = {}) {
  const check = { id: 'check-tcp', ...tcpCheckSchema.parse({ name: 'tcp check', doubleCheck: false, ...rest, request: { hostname: '127.0.0.1', ...request } }) }
  const result = await runCheck(check, options)
  return { result, details: result.details as TcpDetails }
}

describe('TCP runner', () => {
  it('connects, sends data, reads the answer of a server that keeps the connection open, and times each phase', async () => {
    const { result, details } = await run({
      port: echo.port,
      data: 'PING\r\n',
      assertions: [
        { source: 'RESPONSE_DATA', comparison: 'EQUALS', target: '+PING\r\n' },
        { source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'PING', regex: '^\\+(\\w+)' },
        { source: 'RESPONSE_TIME', comparison: 'LESS_THAN', target: '5000' },
      ],
    })
    expect(result.error).toBeNull()
    expect(result.status).toBe('PASSED')
    expect(result.checkType).toBe('TCP')
    expect(echo.received).toContain('PING\r\n')
    expect(details).toMatchObject({
      kind: 'TCP',
      hostname: '127.0.0.1',
      port: echo.port,
      remoteAddress: '127.0.0.1',
      dataSent: true,
      response: '+PING\r\n',
      responseSize: 7,
      responseTruncated: false,
    })
    expect(result.assertions.map((a) => a.passed)).toEqual([true, true, true])
    const t = details.timings!
    for (const phase of ['dns', 'connect', 'data', 'total'] as const) expect(t[phase]).toBeGreaterThanOrEqual(0)
    expect(t.dns).toBe(0) // an IP address: no lookup
    expect(t.total).toBeCloseTo(t.dns + t.connect + t.data, 2)
    expect(result.responseTime).toBe(t.total)
  })

  it('a name is looked up (dns timed) and an answer that ends with the connection is read whole', async () => {
    const { result, details } = await run({
      hostname: 'localhost',
      port: closer.port,
      data: 'QUIT\n',
      assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'BYE\n' }],
    })
    expect(result.status).toBe('PASSED')
    expect(details.response).toBe('BYE\n')
    expect(details.remoteAddress).toBe('127.0.0.1')
  })

  it('without data, a RESPONSE_DATA assertion reads what the server says first (a banner)', async () => {
    const { result, details } = await run({ port: banner.port, assertions: [{ source: 'RESPONSE_DATA', comparison: 'CONTAINS', target: 'ESMTP' }] })
    expect(result.status).toBe('PASSED')
    expect(details.response).toBe('220 mail.local ESMTP ready\r\n')
    expect(details.dataSent).toBe(false)
  })

  it('without data nor RESPONSE_DATA assertion, a connection is the whole run', async () => {
    const { result, details } = await run({ port: silent.port })
    expect(result.status).toBe('PASSED')
    expect(details.timings?.data).toBe(0)
    expect(details.response).toBe('')
  })

  it('a failed assertion fails the run with a readable reason', async () => {
    const { result } = await run({ port: echo.port, data: 'PING\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'NOT_CONTAINS', target: 'PING' }] })
    expect(result.status).toBe('FAILED')
    expect(result.failureKind).toBe('ASSERTION')
    expect(result.error).toBe('RESPONSE_DATA NOT_CONTAINS "PING" failed: got "+PING | "')
  })

  it('a refused port is a NETWORK_ERROR', async () => {
    const closed = await listen('127.0.0.1', () => {})
    const port = closed.port
    await new Promise((r) => closed.server.close(r))
    const { result, details } = await run({ port, data: 'x' })
    expect(result.status).toBe('FAILED')
    expect(result.failureKind).toBe('NETWORK_ERROR')
    expect(result.error).toBe(`connecting to 127.0.0.1:${port} failed: connection refused (ECONNREFUSED)`)
    expect(details.timings).toBeNull()
  })

  it('an answer slower than maxResponseTime fails; slower than degradedResponseTime degrades', async () => {
    // thresholds far from what a loaded machine adds: the answer comes 1.5 s after the data
    const failed = await run({ port: slow.port, data: 'x' }, { maxResponseTime: 500, degradedResponseTime: 100 })
    expect(failed.result.status).toBe('TIMED_OUT')
    expect(failed.result.error).toMatch(
      new RegExp(`^(no answer from 127\\.0\\.0\\.1:${slow.port} within|connecting to 127\\.0\\.0\\.1:${slow.port} timed out after) 500 ms$`),
    )
    const degraded = await run({ port: slow.port, data: 'x' }, { maxResponseTime: 10000, degradedResponseTime: 1000 })
    expect(degraded.result.status).toBe('DEGRADED')
    expect(degraded.details.response).toBe('late\n')
    expect(degraded.details.timings!.data).toBeGreaterThanOrEqual(1490)
  })

  it('a server that never answers the data sent times out at maxResponseTime', async () => {
    const { result } = await run({ port: silent.port, data: 'hello?\n' }, { maxResponseTime: 1000 })
    expect(result.status).toBe('TIMED_OUT')
    expect(result.failureKind).toBe('NETWORK_ERROR')
    expect(result.error).toMatch(/^(no answer from 127\.0\.0\.1:\d+ within|connecting to 127\.0\.0\.1:\d+ timed out after) 1000 ms$/)
  })

  it(`reads at most ${MAX_TCP_RESPONSE_BYTES} bytes of the answer`, async () => {
    const { result, details } = await run({ port: big.port, data: 'more\n', assertions: [{ source: 'RESPONSE_DATA', comparison: 'NOT_EMPTY' }] })
    expect(result.status).toBe('PASSED')
    expect(details.responseSize).toBe(MAX_TCP_RESPONSE_BYTES)
    expect(details.response.length).toBe(MAX_TCP_RESPONSE_BYTES)
    expect(details.responseTruncated).toBe(true)
  })

  it('connects over IPv6 with ipFamily IPv6; an IPv4 address with ipFamily IPv6 is refused', async () => {
    if (!echo6) return // no ::1 on this machine
    const { result, details } = await run({
      hostname: '::1',
      ipFamily: 'IPv6',
      port: echo6.port,
      data: 'six',
      assertions: [{ source: 'RESPONSE_DATA', comparison: 'EQUALS', target: 'v6:six' }],
    })
    expect(result.error).toBeNull()
    expect(details.remoteAddress).toBe('::1')
    const wrong = await run({ hostname: '127.0.0.1', ipFamily: 'IPv6', port: echo.port })
    expect(wrong.result.status).toBe('FAILED')
    expect(wrong.result.error).toContain('127.0.0.1 is not an IPv6 address')
  })

  it('the private-target policy refuses loopback before connecting, unless the address:port is allowed', async () => {
    const before = echo.received.length
    const { result } = await run({ port: echo.port, data: 'REFUSED\n' }, {}, { privateTargets: 'deny' })
    expect(result.hasErrors).toBe(true)
    expect(result.error).toMatch(/^request\.hostname 127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\): refused by/)
    expect(echo.received.slice(before)).not.toContain('REFUSED\n')
    const named = await run({ hostname: 'localhost', port: echo.port }, {}, { privateTargets: 'deny' })
    expect(named.result.error).toMatch(/^request\.hostname localhost resolves to a loopback address/)
    const allowed = await run({ port: echo.port, data: 'OK\n' }, {}, { privateTargets: 'deny', allowedTargets: [`127.0.0.1:${echo.port}`] })
    expect(allowed.result.status).toBe('PASSED')
  })

  it('an aborted run is an error of the run', async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 100)
    const { result } = await run({ port: silent.port, data: 'x' }, { maxResponseTime: 10000 }, { signal: controller.signal })
    expect(result.hasErrors).toBe(true)
    expect(result.error).toBe('run aborted')
  })
})
