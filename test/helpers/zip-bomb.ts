/**
 * A zip of one entry that inflates to `mebibytes` MiB of zeros from about a thousandth of that
 * (a deflate block of 1 MiB of zeros, flushed whole, repeated): what a run may leave in its
 * artifacts to take the memory and the time of whoever unpacks it. Made in milliseconds, never
 * inflated here. Self-contained (zlib given, Buffer only), so that a suite's test can make one
 * too: `(${zipBomb})(zlib, 1024, 'trace.trace')`.
 */
export function zipBomb(zlib: typeof import('node:zlib'), mebibytes: number, name: string): Buffer {
  const block = zlib.deflateRawSync(Buffer.alloc(1 << 20), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH })
  const data = Buffer.concat([...Array(mebibytes).fill(block), Buffer.from([0x03, 0x00])])
  const file = Buffer.from(name, 'utf8')
  const size = mebibytes * (1 << 20)
  const local = Buffer.alloc(30)
  local.writeUInt32LE(0x04034b50, 0)
  local.writeUInt16LE(20, 4)
  local.writeUInt16LE(0x800, 6)
  local.writeUInt16LE(8, 8)
  local.writeUInt32LE(data.length, 18)
  local.writeUInt32LE(size >>> 0, 22)
  local.writeUInt16LE(file.length, 26)
  const central = Buffer.alloc(46)
  central.writeUInt32LE(0x02014b50, 0)
  central.writeUInt16LE(20, 4)
  central.writeUInt16LE(20, 6)
  central.writeUInt16LE(0x800, 8)
  central.writeUInt16LE(8, 10)
  central.writeUInt32LE(data.length, 20)
  central.writeUInt32LE(size >>> 0, 24)
  central.writeUInt16LE(file.length, 28)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(1, 8)
  end.writeUInt16LE(1, 10)
  end.writeUInt32LE(46 + file.length, 12)
  end.writeUInt32LE(30 + file.length + data.length, 16)
  return Buffer.concat([local, file, data, central, file, end])
}
