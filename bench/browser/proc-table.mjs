// The machine's processes from /proc, for the browser benches' memory figures.
import { readdirSync, readFileSync } from 'node:fs'

/** Every process as pid → { ppid, name, rss bytes } from /proc. */
export function processes() {
  const all = new Map()
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8')
      const field = (key) => new RegExp(`^${key}:\\s*(.+)$`, 'm').exec(status)?.[1] ?? ''
      all.set(Number(name), { ppid: Number(field('PPid')), name: field('Name'), rss: Number(field('VmRSS').replace(/\D/g, '') || 0) * 1024 })
    } catch {
      // gone meanwhile
    }
  }
  return all
}

/** The children of each process of `all`, and the resident memory of a process with its descendants. */
export function processTree(all) {
  const children = new Map()
  for (const [pid, p] of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid])
  const treeRss = (pid) => (all.get(pid)?.rss ?? 0) + (children.get(pid) ?? []).reduce((sum, c) => sum + treeRss(c), 0)
  return { children, treeRss }
}
