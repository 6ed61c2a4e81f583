/**
 * A line diff of two texts (a browser check's script, one of its files), shown as the hunks of
 * a unified diff: changed lines with two lines of context, `@@ -a,b +c,d @@` before each hunk.
 * Scripts are small: the longest common subsequence of their lines is computed outright, up to
 * 4 000 000 cells; past that the texts are shown whole, old then new.
 */
export interface TextDiffLine {
  sign: '+' | '-' | ''
  text: string
}

const CONTEXT = 2
const MAX_CELLS = 4_000_000

/** Whether a value is best shown as lines of text rather than one quoted string. */
export function isMultiline(value: unknown): value is string {
  return typeof value === 'string' && value.includes('\n')
}

/** The lines of a text, without the empty one after a final newline. */
export function textLines(text: string): string[] {
  const lines = text.split('\n')
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop()
  return lines
}

/** The hunks of the diff of `before` → `after`, each line signed; a hunk's header is a line without sign. */
export function textDiff(before: string, after: string): TextDiffLine[] {
  const a = textLines(before)
  const b = textLines(after)
  if (a.length * b.length > MAX_CELLS) return [...a.map((text) => ({ sign: '-' as const, text })), ...b.map((text) => ({ sign: '+' as const, text }))]
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..]
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1))
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1])
  }
  const ops: Array<{ sign: '+' | '-' | ''; text: string; ai: number; bi: number }> = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ sign: '', text: a[i], ai: i++, bi: j++ })
    else if (j < b.length && (i === a.length || lcs[i][j + 1] >= lcs[i + 1][j])) ops.push({ sign: '+', text: b[j], ai: i, bi: j++ })
    else ops.push({ sign: '-', text: a[i], ai: i++, bi: j })
  }
  return hunks(ops)
}

/** The changed operations with their context, grouped in hunks under `@@` headers. */
function hunks(ops: Array<{ sign: '+' | '-' | ''; text: string; ai: number; bi: number }>): TextDiffLine[] {
  const keep = new Array<boolean>(ops.length).fill(false)
  ops.forEach((op, k) => {
    if (op.sign === '') return
    for (let m = Math.max(0, k - CONTEXT); m <= Math.min(ops.length - 1, k + CONTEXT); m++) keep[m] = true
  })
  const out: TextDiffLine[] = []
  let k = 0
  while (k < ops.length) {
    if (!keep[k]) {
      k++
      continue
    }
    let end = k
    while (end < ops.length && keep[end]) end++
    const hunk = ops.slice(k, end)
    const oldCount = hunk.filter((o) => o.sign !== '+').length
    const newCount = hunk.filter((o) => o.sign !== '-').length
    out.push({ sign: '', text: `@@ -${hunk[0].ai + (oldCount > 0 ? 1 : 0)},${oldCount} +${hunk[0].bi + (newCount > 0 ? 1 : 0)},${newCount} @@` })
    for (const o of hunk) out.push({ sign: o.sign, text: o.text })
    k = end
  }
  return out
}
