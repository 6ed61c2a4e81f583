/**
 * A strict little XML reader for the SVG badges: every tag closes in order, attributes are
 * quoted, entities are the XML ones. Throws on anything malformed; answers the root element,
 * the text of every element by tag name, and the attributes of the root.
 */
export interface ParsedSvg {
  root: string
  rootAttributes: Record<string, string>
  /** tag name -> the text content of each such element, in order */
  texts: Record<string, string[]>
  /** every fill colour used */
  fills: string[]
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

function decode(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16))
    if (name.startsWith('#')) return String.fromCodePoint(parseInt(name.slice(1), 10))
    const value = ENTITIES[name]
    if (value === undefined) throw new Error(`unknown entity ${whole}`)
    return value
  })
}

export function parseSvg(source: string): ParsedSvg {
  const text = source.trim()
  if (!text.startsWith('<svg')) throw new Error('does not begin with an svg element')
  const stack: Array<{ name: string; text: string }> = []
  const texts: Record<string, string[]> = {}
  const fills: string[] = []
  let root = ''
  let rootAttributes: Record<string, string> = {}
  let position = 0
  let closedRoot = false
  const tag = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/y
  while (position < text.length) {
    if (text[position] !== '<') {
      const end = text.indexOf('<', position)
      const chunk = text.slice(position, end === -1 ? text.length : end)
      if (stack.length === 0) {
        if (chunk.trim() !== '') throw new Error('text outside the root element')
      } else {
        if (chunk.includes('>')) throw new Error('stray ">" in text')
        stack[stack.length - 1].text += decode(chunk)
      }
      position = end === -1 ? text.length : end
      continue
    }
    tag.lastIndex = position
    const match = tag.exec(text)
    if (!match) throw new Error(`malformed tag at ${position}: ${text.slice(position, position + 40)}`)
    const [whole, closing, name, attributeText, selfClosing] = match
    position += whole.length
    if (closedRoot) throw new Error('content after the root element')
    if (closing) {
      const open = stack.pop()
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name ?? 'nothing'}>`)
      ;(texts[name] ??= []).push(open.text)
      if (stack.length > 0) stack[stack.length - 1].text += open.text
      if (stack.length === 0) closedRoot = true
      continue
    }
    const attributes: Record<string, string> = {}
    for (const [, key, quoted] of attributeText.matchAll(/([\w:-]+)\s*=\s*("[^"]*"|'[^']*')/g)) {
      if (key in attributes) throw new Error(`attribute ${key} twice on <${name}>`)
      attributes[key] = decode(quoted.slice(1, -1))
    }
    if (attributes.fill) fills.push(attributes.fill)
    if (stack.length === 0) {
      if (root) throw new Error('two root elements')
      root = name
      rootAttributes = attributes
    }
    if (selfClosing) {
      ;(texts[name] ??= []).push('')
      if (stack.length === 0) closedRoot = true
    } else {
      stack.push({ name, text: '' })
    }
  }
  if (stack.length > 0) throw new Error(`<${stack[stack.length - 1].name}> is never closed`)
  if (root !== 'svg') throw new Error(`root element is <${root}>`)
  return { root, rootAttributes, texts, fills }
}
