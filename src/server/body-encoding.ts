import { Transform, type Readable, type TransformCallback } from 'node:stream'
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib'
import { HttpError } from './errors.js'

/*
 * Request bodies sent with a Content-Encoding (the hosted service's CLI gzips its bodies):
 * decoded as they arrive, and the body limit counts the decoded bytes, so a small compressed
 * body that inflates to gigabytes (a zip bomb) is refused with a 413 as soon as it passes the
 * limit, never held in memory. Other encodings are a 415 naming the accepted ones.
 */

/** The Content-Encoding values a request body may have (besides none, or `identity`). */
export const BODY_ENCODINGS = ['gzip', 'deflate', 'br'] as const

const DECODERS: Record<string, () => Transform> = { gzip: createGunzip, 'x-gzip': createGunzip, deflate: createInflate, br: createBrotliDecompress }

/** The decoded body, counted: the stream fastify reads in place of the request (its `receivedEncodedLength`: the bytes as sent). */
class DecodedBody extends Transform {
  receivedEncodedLength = 0
  private decoded = 0

  constructor(
    private readonly limit: number,
    private readonly stop: () => void,
  ) {
    super()
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.decoded += chunk.length
    if (this.decoded > this.limit) {
      done(new HttpError(413, `Request body is larger than ${this.limit / (1024 * 1024)} MiB once decoded`))
      return
    }
    done(null, chunk)
  }

  override _destroy(error: Error | null, done: (error: Error | null) => void): void {
    this.stop()
    done(error)
  }
}

/**
 * The body of a request as its `content-encoding` header says to read it: the payload itself
 * when there is none (or `identity`), a decoding stream capped at `limit` decoded bytes for
 * gzip, deflate and br; a 415 for any other encoding. A body that is not what its encoding
 * says is a 400 that names the encoding, never quoting the bytes.
 */
export function decodedBody(payload: Readable, header: string | string[] | undefined, limit: number): Readable {
  const sent = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim()
  const encoding = sent.toLowerCase()
  if (encoding === '' || encoding === 'identity') return payload
  const decoder = Object.hasOwn(DECODERS, encoding) ? DECODERS[encoding]() : undefined
  if (!decoder) {
    const shown = JSON.stringify(sent.length > 40 ? `${sent.slice(0, 37)}...` : sent)
    throw new HttpError(415, `Content-Encoding ${shown} is not accepted: send the body as it is, or encoded with one of ${BODY_ENCODINGS.join(', ')}`, {
      header: 'content-encoding',
      accepted: [...BODY_ENCODINGS],
    })
  }
  const body = new DecodedBody(limit, () => {
    payload.unpipe(decoder)
    decoder.destroy()
  })
  // fastify reads this stream whenever it parses the body; an error nobody reads (no parser for
  // the content type) must not be thrown
  body.on('error', () => undefined)
  payload.on('data', (chunk: Buffer) => {
    body.receivedEncodedLength += chunk.length
    if (body.receivedEncodedLength > limit) body.destroy(new HttpError(413, `Request body is larger than ${limit / (1024 * 1024)} MiB`))
  })
  payload.on('error', (error) => body.destroy(error))
  decoder.on('error', (error: NodeJS.ErrnoException) => {
    const message = `Body is not valid ${encoding === 'x-gzip' ? 'gzip' : encoding} data, as its Content-Encoding says (${error.code ?? error.message})`
    body.destroy(new HttpError(400, message, { source: 'payload', keys: [], issues: [{ path: '', message }] }))
  })
  payload.pipe(decoder).pipe(body)
  return body
}
