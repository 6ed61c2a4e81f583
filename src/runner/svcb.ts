import { isIPv4, isIPv6 } from 'node:net'

/**
 * HTTPS (type 65) record data, RFC 9460. dns-packet does not know the type, so its data
 * arrives as raw bytes; this turns it into the presentation form dig prints
 * (`1 . alpn="h2,h3" port=443 ipv4hint=192.0.2.1`) and back (the test DNS server uses it).
 */

export const HTTPS_TYPE = 65

const KEY_NAMES: Record<number, string> = {
  0: 'mandatory',
  1: 'alpn',
  2: 'no-default-alpn',
  3: 'port',
  4: 'ipv4hint',
  5: 'ech',
  6: 'ipv6hint',
}
const KEY_NUMBERS: Record<string, number> = Object.fromEntries(Object.entries(KEY_NAMES).map(([n, k]) => [k, Number(n)]))

function readName(buf: Buffer, start: number): { name: string; next: number } {
  const labels: string[] = []
  let offset = start
  for (;;) {
    if (offset >= buf.length) throw new Error('HTTPS record: target name runs past the data')
    const len = buf[offset]
    offset += 1
    if (len === 0) break
    if (len > 63) throw new Error('HTTPS record: compressed target name')
    labels.push(buf.subarray(offset, offset + len).toString('latin1'))
    offset += len
  }
  return { name: labels.length === 0 ? '.' : `${labels.join('.')}.`, next: offset }
}

function ipv6Text(bytes: Buffer): string {
  const groups: string[] = []
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16))
  // Compress the longest run of zero groups.
  let bestStart = -1
  let bestLen = 0
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i += 1
      continue
    }
    let j = i
    while (j < 8 && groups[j] === '0') j += 1
    if (j - i > bestLen && j - i > 1) {
      bestStart = i
      bestLen = j - i
    }
    i = j
  }
  if (bestStart < 0) return groups.join(':')
  return `${groups.slice(0, bestStart).join(':')}::${groups.slice(bestStart + bestLen).join(':')}`
}

function valueText(key: number, value: Buffer): string {
  switch (key) {
    case 0: {
      const keys: string[] = []
      for (let i = 0; i + 1 < value.length; i += 2) keys.push(KEY_NAMES[value.readUInt16BE(i)] ?? `key${value.readUInt16BE(i)}`)
      return keys.join(',')
    }
    case 1: {
      const ids: string[] = []
      for (let i = 0; i < value.length; ) {
        const len = value[i]
        ids.push(value.subarray(i + 1, i + 1 + len).toString('latin1'))
        i += 1 + len
      }
      return `"${ids.join(',')}"`
    }
    case 3:
      return String(value.length >= 2 ? value.readUInt16BE(0) : 0)
    case 4: {
      const addresses: string[] = []
      for (let i = 0; i + 3 < value.length; i += 4) addresses.push(`${value[i]}.${value[i + 1]}.${value[i + 2]}.${value[i + 3]}`)
      return addresses.join(',')
    }
    case 5:
      return value.toString('base64')
    case 6: {
      const addresses: string[] = []
      for (let i = 0; i + 15 < value.length; i += 16) addresses.push(ipv6Text(value.subarray(i, i + 16)))
      return addresses.join(',')
    }
    default:
      return `"${value.toString('latin1')}"`
  }
}

/** Presentation form of HTTPS/SVCB record data. */
export function decodeHttpsRecord(data: Buffer): string {
  if (data.length < 3) throw new Error('HTTPS record: data too short')
  const priority = data.readUInt16BE(0)
  const { name, next } = readName(data, 2)
  const parts = [String(priority), name]
  let offset = next
  while (offset + 4 <= data.length) {
    const key = data.readUInt16BE(offset)
    const len = data.readUInt16BE(offset + 2)
    const value = data.subarray(offset + 4, offset + 4 + len)
    offset += 4 + len
    const keyName = KEY_NAMES[key] ?? `key${key}`
    parts.push(key === 2 ? keyName : `${keyName}=${valueText(key, value)}`)
  }
  return parts.join(' ')
}

export interface HttpsRecordData {
  priority: number
  target: string
  params?: {
    mandatory?: string[]
    alpn?: string[]
    noDefaultAlpn?: boolean
    port?: number
    ipv4hint?: string[]
    ech?: string
    ipv6hint?: string[]
  }
}

function encodeName(name: string): Buffer {
  const trimmed = name.replace(/\.$/, '')
  if (trimmed === '') return Buffer.from([0])
  const parts = trimmed.split('.').map((label) => {
    const bytes = Buffer.from(label, 'latin1')
    return Buffer.concat([Buffer.from([bytes.length]), bytes])
  })
  return Buffer.concat([...parts, Buffer.from([0])])
}

function ipv6Bytes(address: string): Buffer {
  if (!isIPv6(address)) throw new Error(`not an IPv6 address: ${address}`)
  const [head, tail] = address.includes('::') ? address.split('::') : [address, null]
  const headGroups = head ? head.split(':') : []
  const tailGroups = tail ? tail.split(':') : []
  const zeros = tail === null ? 0 : 8 - headGroups.length - tailGroups.length
  const groups = [...headGroups, ...Array(zeros).fill('0'), ...tailGroups]
  const out = Buffer.alloc(16)
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16), i * 2))
  return out
}

/** Wire form of HTTPS/SVCB record data (params written in key order, as RFC 9460 requires). */
export function encodeHttpsRecord(record: HttpsRecordData): Buffer {
  const params: Array<[number, Buffer]> = []
  const p = record.params ?? {}
  if (p.mandatory) {
    const b = Buffer.alloc(p.mandatory.length * 2)
    p.mandatory.forEach((k, i) => b.writeUInt16BE(KEY_NUMBERS[k] ?? 0, i * 2))
    params.push([0, b])
  }
  if (p.alpn) params.push([1, Buffer.concat(p.alpn.map((id) => Buffer.concat([Buffer.from([id.length]), Buffer.from(id, 'latin1')])))])
  if (p.noDefaultAlpn) params.push([2, Buffer.alloc(0)])
  if (p.port !== undefined) {
    const b = Buffer.alloc(2)
    b.writeUInt16BE(p.port)
    params.push([3, b])
  }
  if (p.ipv4hint) {
    params.push([
      4,
      Buffer.concat(
        p.ipv4hint.map((a) => {
          if (!isIPv4(a)) throw new Error(`not an IPv4 address: ${a}`)
          return Buffer.from(a.split('.').map(Number))
        }),
      ),
    ])
  }
  if (p.ech) params.push([5, Buffer.from(p.ech, 'base64')])
  if (p.ipv6hint) params.push([6, Buffer.concat(p.ipv6hint.map(ipv6Bytes))])
  const head = Buffer.alloc(2)
  head.writeUInt16BE(record.priority)
  const body = params.map(([key, value]) => {
    const h = Buffer.alloc(4)
    h.writeUInt16BE(key, 0)
    h.writeUInt16BE(value.length, 2)
    return Buffer.concat([h, value])
  })
  return Buffer.concat([head, encodeName(record.target), ...body])
}
