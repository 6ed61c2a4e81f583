/**
 * Memory stays flat under list queries that each differ (issue 8, B2): large checks listed
 * with many distinct `tag` values must not be kept by the server after the answers are sent.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from 'vitest'
import { caller, icmpBody, startTestServer } from '../helpers.js'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

function retainedBytes(): number {
  gc()
  gc()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.external
}

describe('memory under distinct list queries', () => {
  it('60 lists of ten 400 KB checks, each with another tag, keep nothing', async () => {
    const server = await startTestServer()
    try {
      const api = caller(server)
      for (let i = 0; i < 10; i++) {
        const answer = await api('POST', '/v1/checks/icmp', icmpBody({ name: `big ${i}`, tags: ['big'], script: `// ${i}\n${'x'.repeat(400 * 1024)}` }))
        expect(answer.status).toBe(201)
      }
      // one list first, so what every answer needs once (statements, buffers) is counted in the baseline
      expect((await api('GET', '/v1/checks?limit=100&tag=big')).json).toHaveLength(10)
      const before = retainedBytes()
      for (let i = 0; i < 60; i++) {
        const answer = await api('GET', `/v1/checks?limit=100&tag=big&tag=other-${i}`)
        expect(answer.status).toBe(200)
        expect(answer.text.length).toBeGreaterThan(4_000_000)
      }
      const grown = retainedBytes() - before
      // 60 answers of 4 MB are 240 MB; a server that keeps them fails by far
      expect(grown).toBeLessThan(60 * 1024 * 1024)
    } finally {
      await server.close()
    }
  }, 60_000)
})
