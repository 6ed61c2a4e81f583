/**
 * A status page's themeColors are CSS colours: one rule in src/schema/status-page.ts, so the
 * CLI refuses a bad one before anything is sent (naming file › construct › field and what is
 * allowed) and the server answers a 400 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { THEME_COLOR_FIELDS, parseCssColor, statusPageSchema } from '../../src/schema/index.js'
import type { LocalServer } from '../../src/server/index.js'
import { monitors as run } from '../helpers/cli.js'
import { caller, expect400, startTestServer } from '../server/helpers.js'
import { tempProject } from './helpers.js'

const theme = (overrides: Record<string, string> = {}) => ({ ...Object.fromEntries(THEME_COLOR_FIELDS.map((f) => [f, '#112233'])), ...overrides })
const ALLOWED =
  'must be a CSS colour: #rgb, #rgba, #rrggbb or #rrggbbaa; rgb()/rgba() with 0-255 or 0-100% channels; hsl()/hsla() with a hue and percentages; or a named colour such as navy or transparent'

const VALID = [
  '#fff',
  '#FFF8',
  '#0b3d91',
  '#0b3d9180',
  'rgb(12, 34, 56)',
  'rgba(12,34,56,0.5)',
  'rgb(10% 20% 30%)',
  'rgb(12 34 56 / 50%)',
  'hsl(210, 50%, 40%)',
  'hsla(210deg, 50%, 40%, .3)',
  'hsl(0.5turn 100% 50% / 1)',
  'navy',
  'RebeccaPurple',
  'transparent',
  ' white ',
]
const INVALID = [
  '',
  'blurple',
  '#ff',
  '#fffff',
  '#ggg',
  'rgb(256, 0, 0)',
  'rgb(1, 2)',
  'rgb(10%, 2, 3)',
  'rgba(1, 2, 3, 2)',
  'hsl(10, 20, 30)',
  'hsl(10, 120%, 30%)',
  'oklch(70% 0.1 200)',
  'var(--x)',
  'currentColor',
  'red}</style><script>',
  'rgb(1,2,3);color:red',
  '#fff !important',
]

describe('theme colours: the notations allowed', () => {
  it('takes hex, rgb()/rgba(), hsl()/hsla() and named colours; nothing else', () => {
    for (const value of VALID) expect(parseCssColor(value), value).toBeDefined()
    for (const value of INVALID) expect(parseCssColor(value), value).toBeUndefined()
    expect(parseCssColor('#0b3d9180')).toEqual({ r: 11, g: 61, b: 145, a: 128 / 255 })
    expect(parseCssColor('hsl(120, 100%, 25%)')).toEqual({ r: 0, g: 127.5, b: 0, a: 1 })
    expect(parseCssColor('rebeccapurple')).toEqual({ r: 102, g: 51, b: 153, a: 1 })
  })

  it('the shared schema names the field and says what is allowed', () => {
    const parsed = statusPageSchema.safeParse({ name: 'p', url: 'p', cards: [], themeColors: { light: theme(), dark: theme({ linkFontColor: 'blurple' }) } })
    expect(parsed.success).toBe(false)
    expect(parsed.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['themeColors.dark.linkFontColor', `${ALLOWED} (got "blurple")`]])
  })
})

describe('monitors validate refuses a bad colour before anything is sent', () => {
  it('names file › construct › field and what is allowed, exit 1', async () => {
    const dir = tempProject({
      'monitoring.config.ts': `export default { projectName: 'p' }\n`,
      'page.check.ts': `import { StatusPage } from 'monitors-as-code'
const colors = ${JSON.stringify(theme())}
new StatusPage('public', { name: 'Shop', url: 'shop', cards: [], themeColors: { light: colors, dark: { ...colors, linkFontColor: 'blurple', bodyFontColor: 'rgb(300, 0, 0)' } } })
`,
    })
    const result = await run(dir, ['validate'], { FORCE_COLOR: undefined })
    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    expect(result.stderr).toBe(
      [
        `✖ page.check.ts › StatusPage "public" › themeColors.dark.bodyFontColor: ${ALLOWED} (got "rgb(300, 0, 0)")`,
        `✖ page.check.ts › StatusPage "public" › themeColors.dark.linkFontColor: ${ALLOWED} (got "blurple")`,
        '2 problems found; nothing was sent.',
        '',
      ].join('\n'),
    )
  })
})

describe('the server refuses a bad colour with a 400 naming the field', () => {
  let server: LocalServer

  beforeAll(async () => {
    server = await startTestServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it('on create and on update; every allowed notation is taken', async () => {
    const api = caller(server)
    const bad = await api('POST', '/v1/status-pages', {
      name: 'p',
      url: 'colours',
      cards: [],
      themeColors: { light: theme({ borderColor: '#12345' }), dark: theme() },
    })
    expect(expect400(bad, 'payload')).toEqual(['themeColors.light.borderColor'])
    expect(bad.json.message).toBe(`themeColors.light.borderColor: ${ALLOWED} (got "#12345")`)
    const fields = THEME_COLOR_FIELDS.slice(0, VALID.length)
    const good = Object.fromEntries(fields.map((f, i) => [f, VALID[i]]))
    const created = await api('POST', '/v1/status-pages', { name: 'p', url: 'colours', cards: [], themeColors: { light: theme(good), dark: theme() } })
    expect(created.status, created.text).toBe(201)
    expect(created.json.themeColors.light).toMatchObject(good)
    const update = await api('PUT', `/v1/status-pages/${created.json.id}`, {
      name: 'p',
      url: 'colours',
      cards: [],
      themeColors: { light: theme(), dark: theme({ headerFontColor: 'oklch(70% 0.1 200)' }) },
    })
    expect(expect400(update, 'payload')).toEqual(['themeColors.dark.headerFontColor'])
  })
})
