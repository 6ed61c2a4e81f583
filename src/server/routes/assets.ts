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

/** The URL that serves one file of a result's manifest (GET /v1/check-results/{checkId}/{id}/assets/{name}). */
export function assetUrl(origin: string, result: Pick<CheckResultRecord, 'checkId' | 'id'>, name: string): string {
  return `${origin}/v1/check-results/${encodeURIComponent(result.checkId)}/${encodeURIComponent(result.id)}/assets/${name.split('/').map(encodeURIComponent).join('/')}`
}

/**
 * A Playwright check suite's result in the reference's shape (CheckResultPlaywright), from its
 * run's details: the failed tests' errors, its traces (files and URLs), its log lines and every
 * file it kept; undefined for a result of another type. Videos are not recorded; the JSON report
 * is read into `details.tests` and kept as the file report.json (`playwrightTestJsonReportFile`
 * its URL; null when it was not kept: no report, or over the run's artifact limit).
 */
export function playwrightCheckResult(origin: string, result: CheckResultRecord): Record<string, unknown> | undefined {
  const details = (result.details as { details?: { kind?: string; logs?: unknown; tests?: unknown } }).details
  if (details?.kind !== 'PLAYWRIGHT') return undefined
  const tests = Array.isArray(details.tests) ? (details.tests as Array<{ titlePath?: string[]; status?: string; error?: { message?: string } | null }>) : []
  const files = manifestOf(result).map((f) => ({ ...f, url: assetUrl(origin, result, f.name) }))
  const traces = files.filter((f) => f.kind === 'trace')
  return {
    errors: tests.filter((t) => t.error).map((t) => ({ test: (t.titlePath ?? []).join(' › '), status: t.status, message: t.error?.message ?? '' })),
    playwrightTraceFiles: traces.map((f) => ({ url: f.url, name: f.name.split('/').slice(-2, -1)[0] ?? f.name, filename: f.name.split('/').pop() })),
    jobLog: typeof details.logs === 'string' ? details.logs.split('\n').filter((l) => l.trim() !== '') : [],
    jobAssets: files.map((f) => ({ type: ASSET_TYPE[f.kind] ?? 'file', name: f.name, url: f.url, contentType: f.contentType, bytes: f.bytes })),
    playwrightTestVideos: [],
    playwrightTestTraces: traces.map((f) => f.url),
    playwrightTestJsonReportFile: files.find((f) => f.name === 'report.json')?.url ?? null,
  }
}

function base(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}

export function assetRoutes(app: FastifyInstance, store: Store, artifacts: ArtifactStore | undefined): void {
  async function resultOf(request: FastifyRequest): Promise<CheckResultRecord> {
    const { checkId, id } = parseOr400(params, request.params, 'params')
    const result = await store.results.get(request.accountId, id, checkId)
    if (!result || result.checkId !== checkId) throw notFound('Check result')
    return result
  }

  app.get('/v1/check-results/:checkId/:id/assets', async (request) => {
    const result = await resultOf(request)
    const check = await store.checks.get(request.accountId, result.checkId)
    const body = check ? (JSON.parse(check.json) as { name?: string; checkType?: string }) : {}
    const files = manifestOf(result).filter((f) => artifacts?.file(request.accountId, result.id, result.stoppedAt, f.name) !== undefined)
    return {
      assets: files.map((f) => ({
        type: ASSET_TYPE[f.kind] ?? 'file',
        name: f.name,
        url: assetUrl(base(request), result, f.name),
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
