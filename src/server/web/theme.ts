import { THEME_COLOR_FIELDS, parseCssColor } from '../../schema/index.js'

/*
 * A status page's colours: the page's `themeColors` applied exactly (each of the 12 fields is
 * one CSS variable), the built-in palette where a page has none, and the WCAG contrast of the
 * pairs a reader depends on, reported when it is below the AA ratio for text (4.5:1).
 */

export type ThemeField = (typeof THEME_COLOR_FIELDS)[number]
export type Theme = Record<ThemeField, string>

export const DEFAULT_THEMES: { light: Theme; dark: Theme } = {
  light: {
    bodyBackgroundColor: '#f7f8fa',
    headerBackgroundColor: '#1f2937',
    headerFontColor: '#ffffff',
    titleFontColor: '#111827',
    bodyFontColor: '#1f2937',
    bodyFontColorMuted: '#4b5563',
    navigationFontColor: '#e5e7eb',
    linkFontColor: '#1d4ed8',
    cardBackgroundColor: '#ffffff',
    borderColor: '#d1d5db',
    primaryButtonBackgroundColor: '#1d4ed8',
    primaryButtonFontColor: '#ffffff',
  },
  dark: {
    bodyBackgroundColor: '#0f172a',
    headerBackgroundColor: '#020617',
    headerFontColor: '#f8fafc',
    titleFontColor: '#f8fafc',
    bodyFontColor: '#e2e8f0',
    bodyFontColorMuted: '#a3aebf',
    navigationFontColor: '#cbd5e1',
    linkFontColor: '#93c5fd',
    cardBackgroundColor: '#1e293b',
    borderColor: '#334155',
    primaryButtonBackgroundColor: '#93c5fd',
    primaryButtonFontColor: '#0f172a',
  },
}

/**
 * A value that can sit in a CSS declaration as it is: one of the colour notations a page's
 * themeColors accept (src/schema/colors.ts; validated on every write), so that a page's colours
 * cannot end the style block or add rules. A page stored before colours were validated may
 * hold something else: that field falls back to the built-in palette.
 */
const SAFE_COLOR = /^(#[0-9a-fA-F]{3,8}|[a-zA-Z]{1,30}|(rgb|rgba|hsl|hsla)\([0-9a-zA-Z.,%\s/+-]{1,80}\))$/

export function safeColor(value: string | undefined): string | undefined {
  const v = value?.trim()
  return v && SAFE_COLOR.test(v) && parseCssColor(v) !== undefined ? v : undefined
}

/** The page's colours, field by field; a field that is not a colour notation falls back to the built-in palette. */
export function themesOf(themeColors: { light: Theme; dark: Theme } | undefined): { light: Theme; dark: Theme; ignored: string[] } {
  const ignored: string[] = []
  const pick = (mode: 'light' | 'dark'): Theme => {
    const given = themeColors?.[mode]
    return Object.fromEntries(
      THEME_COLOR_FIELDS.map((field) => {
        const value = given?.[field]
        const safe = safeColor(value)
        if (value !== undefined && safe === undefined) ignored.push(`${mode}.${field}`)
        return [field, safe ?? DEFAULT_THEMES[mode][field]]
      }),
    ) as Theme
  }
  return { light: pick('light'), dark: pick('dark'), ignored }
}

/** CSS custom properties `--bodyBackgroundColor: …;` for one theme. */
export function cssVariables(theme: Theme): string {
  return THEME_COLOR_FIELDS.map((field) => `--${field}:${theme[field]}`).join(';')
}

/** sRGB of a colour of the notations themeColors accept (alpha left aside); undefined for anything else (the pair is then not judged). */
export function parseColor(value: string): [number, number, number] | undefined {
  const c = parseCssColor(value)
  return c ? [c.r, c.g, c.b] : undefined
}

function luminance([r, g, b]: [number, number, number]): number {
  const channel = (c: number) => {
    const s = c / 255
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
  }
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
}

/** WCAG 2 contrast ratio of two colours (1 to 21), or undefined when one is not readable here. */
export function contrastRatio(a: string, b: string): number | undefined {
  const ca = parseColor(a)
  const cb = parseColor(b)
  if (!ca || !cb) return undefined
  const [hi, lo] = [luminance(ca), luminance(cb)].sort((x, y) => y - x)
  return (hi + 0.05) / (lo + 0.05)
}

/** Text colour on the background it is shown on, as the page lays them out. */
export const CONTRAST_PAIRS: Array<[ThemeField, ThemeField]> = [
  ['bodyFontColor', 'bodyBackgroundColor'],
  ['bodyFontColor', 'cardBackgroundColor'],
  ['bodyFontColorMuted', 'cardBackgroundColor'],
  ['titleFontColor', 'bodyBackgroundColor'],
  ['titleFontColor', 'cardBackgroundColor'],
  ['linkFontColor', 'cardBackgroundColor'],
  ['headerFontColor', 'headerBackgroundColor'],
  ['navigationFontColor', 'headerBackgroundColor'],
  ['primaryButtonFontColor', 'primaryButtonBackgroundColor'],
]

export const MIN_CONTRAST = 4.5

export interface ContrastProblem {
  theme: 'light' | 'dark'
  foreground: ThemeField
  background: ThemeField
  ratio: number
  required: number
}

/** The pairs below 4.5:1 in the themes a reader can see. */
export function contrastProblems(themes: { light: Theme; dark: Theme }, shown: Array<'light' | 'dark'>): ContrastProblem[] {
  const problems: ContrastProblem[] = []
  for (const mode of shown) {
    for (const [foreground, background] of CONTRAST_PAIRS) {
      const ratio = contrastRatio(themes[mode][foreground], themes[mode][background])
      if (ratio !== undefined && ratio < MIN_CONTRAST)
        problems.push({ theme: mode, foreground, background, ratio: Math.round(ratio * 100) / 100, required: MIN_CONTRAST })
    }
  }
  return problems
}

/** The overall banner's states: a service state, or maintenance (a window in progress while every service is operational). */
export type BannerState = 'operational' | 'degraded' | 'partial_outage' | 'major_outage' | 'maintenance'

/**
 * The overall banner's colours: the whole banner in its state's colour, as Statuspage, Instatus
 * and Better Stack show it. The same in every theme (neither is a themeColors field, so a
 * page's colours cannot make the banner unreadable); each text colour is at least 4.5:1 on its
 * background (tested): white on green, orange, red and blue, dark on yellow.
 */
export const BANNER_COLORS: Record<BannerState, { background: string; text: string }> = {
  operational: { background: '#15803d', text: '#ffffff' },
  degraded: { background: '#fbbf24', text: '#1f2937' },
  partial_outage: { background: '#c2410c', text: '#ffffff' },
  major_outage: { background: '#b91c1c', text: '#ffffff' },
  maintenance: { background: '#1d4ed8', text: '#ffffff' },
}
