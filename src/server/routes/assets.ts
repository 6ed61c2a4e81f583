import { createReadStream } from 'node:fs'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { artifactNameProblem, type ArtifactStore } from '../artifacts.js'
import { notFound, parseOr400 } from '../errors.js'
import type { CheckResultRecord, Store } from '../store/index.js'

/*
 * The artifacts of a browser or multi-step result (reference: "Retrieve a normalized asset
 * manifest for a check result", AssetManifest): GET /v1/check-results/{checkId}/{id}/assets
 * lists them, each with the authenticated URL that serves it,
 * GET /v1/check-results/{checkId}/{id}/assets/{name}. Only what the result's manifest names is
 * served, and only to the account that owns the result: another account's result, or a name the
 * manifest does not hold, answers 404 as a missing one.
 */

const params = z.object({ checkId: z.string().min(1).max(200), id: z.string().min(1).max(200) })

/** The reference's asset types, from the runner's artifact kinds. */
const ASSET_TYPE: Record<string, string> = {
  screenshot: 'screenshot',
  trace: 'trace',
  console: 'log',
  network: 'log',
  log: 'log',
  attachment: 'file',
  other: 'file',
}

interface ManifestFile {
  name: string
  kind: string
  bytes: number
  contentType: string
}

/** The files a result's run kept (its manifest), empty for a result of another type. */
export function manifestOf(result: CheckResultRecord): ManifestFile[] {
  const details = (result.details as { details?: { artifacts?: { files?: unknown } } }).details
  const files = details?.artifacts?.files
  return Array.isArray(files) ? (files.filter((f) => f && typeof f.name === 'string') as ManifestFile[]) : []
}

function base(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}

export function assetRoutes(app: FastifyInstance, store: Store, artifacts: ArtifactStore | undefined): void {
  async function resultOf(request: FastifyRequest): Promise<CheckResultRecord> {
    const { checkId, id } = parseOr400(params, request.params, 'params')
    const result = await store.results.get(request.accountId, id)
    if (!result || result.checkId !== checkId) throw notFound('Check result')
    return result
  }

  app.get('/v1/check-results/:checkId/:id/assets', async (request) => {
    const result = await resultOf(request)
    const check = await store.checks.get(request.accountId, result.checkId)
    const body = check ? (JSON.parse(check.json) as { name?: string; checkType?: string }) : {}
    const path = `/v1/check-results/${encodeURIComponent(result.checkId)}/${encodeURIComponent(result.id)}/assets/`
    const files = manifestOf(result).filter((f) => artifacts?.file(request.accountId, result.id, result.stoppedAt, f.name) !== undefined)
    return {
      assets: files.map((f) => ({
        type: ASSET_TYPE[f.kind] ?? 'file',
        name: f.name,
        url: `${base(request)}${path}${f.name.split('/').map(encodeURIComponent).join('/')}`,
        contentType: f.contentType,
        bytes: f.bytes,
        source: { type: 'check-result', checkId: result.checkId, checkName: body.name, checkType: body.checkType, resultId: result.id },
      })),
      truncated: false,
    }
  })

  app.get<{ Params: { '*': string } }>('/v1/check-results/:checkId/:id/assets/*', async (request, reply) => {
    const result = await resultOf(request)
    const name = request.params['*']
    if (artifactNameProblem(name)) throw notFound('Asset')
    const entry = manifestOf(result).find((f) => f.name === name)
    const file = entry ? artifacts?.file(request.accountId, result.id, result.stoppedAt, name) : undefined
    if (!entry || !file) throw notFound('Asset')
    const download = name.split('/').pop() ?? 'asset'
    return reply
      .type(entry.contentType || 'application/octet-stream')
      .header('content-disposition', `${entry.kind === 'screenshot' ? 'inline' : 'attachment'}; filename="${download.replace(/[^\w.-]/g, '_')}"`)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'private, max-age=3600')
      .send(createReadStream(file))
  })
}
