import { z } from 'zod'

/*
 * CSS colours a status page's `themeColors` accept: the notations whose value every browser
 * reads the same way and whose contrast can be judged (docs/api.md, "Status pages").
 * - hex: #rgb, #rgba, #rrggbb, #rrggbbaa
 * - rgb() and rgba(): three numbers 0–255 or three percentages 0–100%, comma- or
 *   space-separated, with an optional alpha (0–1 or 0–100%; after `,` or `/`)
 * - hsl() and hsla(): a hue (a number, or with deg, turn, rad or grad), saturation and
 *   lightness in percent, with an optional alpha as above
 * - the 148 named colours of CSS Color Module Level 4, and `transparent` (any case)
 * Not accepted: other functions (hwb(), lab(), lch(), oklab(), oklch(), color(), var()),
 * currentColor and system colours.
 */

/** The named colours of CSS Color Module Level 4, as sRGB. */
export const CSS_COLOR_NAMES: Readonly<Record<string, readonly [number, number, number]>> = {
  aliceblue: [240, 248, 255],
  antiquewhite: [250, 235, 215],
  aqua: [0, 255, 255],
  aquamarine: [127, 255, 212],
  azure: [240, 255, 255],
  beige: [245, 245, 220],
  bisque: [255, 228, 196],
  black: [0, 0, 0],
  blanchedalmond: [255, 235, 205],
  blue: [0, 0, 255],
  blueviolet: [138, 43, 226],
  brown: [165, 42, 42],
  burlywood: [222, 184, 135],
  cadetblue: [95, 158, 160],
  chartreuse: [127, 255, 0],
  chocolate: [210, 105, 30],
  coral: [255, 127, 80],
  cornflowerblue: [100, 149, 237],
  cornsilk: [255, 248, 220],
  crimson: [220, 20, 60],
  cyan: [0, 255, 255],
  darkblue: [0, 0, 139],
  darkcyan: [0, 139, 139],
  darkgoldenrod: [184, 134, 11],
  darkgray: [169, 169, 169],
  darkgreen: [0, 100, 0],
  darkgrey: [169, 169, 169],
  darkkhaki: [189, 183, 107],
  darkmagenta: [139, 0, 139],
  darkolivegreen: [85, 107, 47],
  darkorange: [255, 140, 0],
  darkorchid: [153, 50, 204],
  darkred: [139, 0, 0],
  darksalmon: [233, 150, 122],
  darkseagreen: [143, 188, 143],
  darkslateblue: [72, 61, 139],
  darkslategray: [47, 79, 79],
  darkslategrey: [47, 79, 79],
  darkturquoise: [0, 206, 209],
  darkviolet: [148, 0, 211],
  deeppink: [255, 20, 147],
  deepskyblue: [0, 191, 255],
  dimgray: [105, 105, 105],
  dimgrey: [105, 105, 105],
  dodgerblue: [30, 144, 255],
  firebrick: [178, 34, 34],
  floralwhite: [255, 250, 240],
  forestgreen: [34, 139, 34],
  fuchsia: [255, 0, 255],
  gainsboro: [220, 220, 220],
  ghostwhite: [248, 248, 255],
  gold: [255, 215, 0],
  goldenrod: [218, 165, 32],
  gray: [128, 128, 128],
  green: [0, 128, 0],
  greenyellow: [173, 255, 47],
  grey: [128, 128, 128],
  honeydew: [240, 255, 240],
  hotpink: [255, 105, 180],
  indianred: [205, 92, 92],
  indigo: [75, 0, 130],
  ivory: [255, 255, 240],
  khaki: [240, 230, 140],
  lavender: [230, 230, 250],
  lavenderblush: [255, 240, 245],
  lawngreen: [124, 252, 0],
  lemonchiffon: [255, 250, 205],
  lightblue: [173, 216, 230],
  lightcoral: [240, 128, 128],
  lightcyan: [224, 255, 255],
  lightgoldenrodyellow: [250, 250, 210],
  lightgray: [211, 211, 211],
  lightgreen: [144, 238, 144],
  lightgrey: [211, 211, 211],
  lightpink: [255, 182, 193],
  lightsalmon: [255, 160, 122],
  lightseagreen: [32, 178, 170],
  lightskyblue: [135, 206, 250],
  lightslategray: [119, 136, 153],
  lightslategrey: [119, 136, 153],
  lightsteelblue: [176, 196, 222],
  lightyellow: [255, 255, 224],
  lime: [0, 255, 0],
  limegreen: [50, 205, 50],
  linen: [250, 240, 230],
  magenta: [255, 0, 255],
  maroon: [128, 0, 0],
  mediumaquamarine: [102, 205, 170],
  mediumblue: [0, 0, 205],
  mediumorchid: [186, 85, 211],
  mediumpurple: [147, 112, 219],
  mediumseagreen: [60, 179, 113],
  mediumslateblue: [123, 104, 238],
  mediumspringgreen: [0, 250, 154],
  mediumturquoise: [72, 209, 204],
  mediumvioletred: [199, 21, 133],
  midnightblue: [25, 25, 112],
  mintcream: [245, 255, 250],
  mistyrose: [255, 228, 225],
  moccasin: [255, 228, 181],
  navajowhite: [255, 222, 173],
  navy: [0, 0, 128],
  oldlace: [253, 245, 230],
  olive: [128, 128, 0],
  olivedrab: [107, 142, 35],
  orange: [255, 165, 0],
  orangered: [255, 69, 0],
  orchid: [218, 112, 214],
  palegoldenrod: [238, 232, 170],
  palegreen: [152, 251, 152],
  paleturquoise: [175, 238, 238],
  palevioletred: [219, 112, 147],
  papayawhip: [255, 239, 213],
  peachpuff: [255, 218, 185],
  peru: [205, 133, 63],
  pink: [255, 192, 203],
  plum: [221, 160, 221],
  powderblue: [176, 224, 230],
  purple: [128, 0, 128],
  rebeccapurple: [102, 51, 153],
  red: [255, 0, 0],
  rosybrown: [188, 143, 143],
  royalblue: [65, 105, 225],
  saddlebrown: [139, 69, 19],
  salmon: [250, 128, 114],
  sandybrown: [244, 164, 96],
  seagreen: [46, 139, 87],
  seashell: [255, 245, 238],
  sienna: [160, 82, 45],
  silver: [192, 192, 192],
  skyblue: [135, 206, 235],
  slateblue: [106, 90, 205],
  slategray: [112, 128, 144],
  slategrey: [112, 128, 144],
  snow: [255, 250, 250],
  springgreen: [0, 255, 127],
  steelblue: [70, 130, 180],
  tan: [210, 180, 140],
  teal: [0, 128, 128],
  thistle: [216, 191, 216],
  tomato: [255, 99, 71],
  turquoise: [64, 224, 208],
  violet: [238, 130, 238],
  wheat: [245, 222, 179],
  white: [255, 255, 255],
  whitesmoke: [245, 245, 245],
  yellow: [255, 255, 0],
  yellowgreen: [154, 205, 50],
}

/** A colour as sRGB channels 0–255 and alpha 0–1. */
export interface Rgba {
  r: number
  g: number
  b: number
  a: number
}

const NUMBER = String.raw`[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?`

/** `12`, `50%` → its value and whether it is a percentage; undefined when it is neither. */
function component(text: string): { value: number; percent: boolean } | undefined {
  const m = new RegExp(`^(${NUMBER})(%?)$`, 'i').exec(text)
  return m ? { value: Number(m[1]), percent: m[2] === '%' } : undefined
}

/** An alpha 0–1 or 0%–100%, or undefined when out of range or not a number. */
function alpha(text: string | undefined): number | undefined {
  if (text === undefined) return 1
  const c = component(text)
  if (!c) return undefined
  const a = c.percent ? c.value / 100 : c.value
  return a >= 0 && a <= 1 ? a : undefined
}

/** The arguments of `name(…)`: three values and an optional alpha, comma-separated or space-separated with `/`. */
function args(inner: string): { values: string[]; alpha?: string } | undefined {
  const text = inner.trim()
  if (text.includes(',')) {
    const parts = text.split(',').map((p) => p.trim())
    if (parts.length !== 3 && parts.length !== 4) return undefined
    return { values: parts.slice(0, 3), alpha: parts[3] }
  }
  const [main, slash, ...rest] = text.split('/')
  if (rest.length > 0) return undefined
  const values = main.trim().split(/\s+/)
  if (values.length !== 3) return undefined
  return { values, alpha: slash === undefined ? undefined : slash.trim() }
}

function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const k = (n: number) => (n + h / 30) % 12
  const a = s * Math.min(l, 1 - l)
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)))
  return [f(0) * 255, f(8) * 255, f(4) * 255]
}

const HUE_UNITS: Record<string, number> = { '': 1, deg: 1, grad: 0.9, rad: 180 / Math.PI, turn: 360 }

/** The colour a CSS colour text names (see the list above), or undefined when it is not one of those notations. */
export function parseCssColor(value: string): Rgba | undefined {
  const v = value.trim().toLowerCase()
  if (v === 'transparent') return { r: 0, g: 0, b: 0, a: 0 }
  const named = CSS_COLOR_NAMES[v]
  if (named) return { r: named[0], g: named[1], b: named[2], a: 1 }
  const hex = /^#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(v)
  if (hex) {
    const h = hex[1]
    const pairs = h.length <= 4 ? [...h].map((c) => c + c) : (h.match(/../g) as string[])
    const [r, g, b, a] = pairs.map((p) => parseInt(p, 16))
    return { r, g, b, a: a === undefined ? 1 : a / 255 }
  }
  const fn = /^(rgba?|hsla?)\(([^()]*)\)$/.exec(v)
  if (!fn) return undefined
  const parsed = args(fn[2])
  if (!parsed) return undefined
  const a = alpha(parsed.alpha)
  if (a === undefined) return undefined
  if (fn[1].startsWith('rgb')) {
    const cs = parsed.values.map(component)
    if (cs.some((c) => !c) || new Set(cs.map((c) => c!.percent)).size !== 1) return undefined
    const channels = cs.map((c) => (c!.percent ? (c!.value / 100) * 255 : c!.value))
    if (cs.some((c) => c!.value < 0 || c!.value > (c!.percent ? 100 : 255))) return undefined
    return { r: channels[0], g: channels[1], b: channels[2], a }
  }
  const hue = new RegExp(`^(${NUMBER})(deg|grad|rad|turn)?$`, 'i').exec(parsed.values[0])
  const s = component(parsed.values[1])
  const l = component(parsed.values[2])
  if (!hue || !s?.percent || !l?.percent || s.value < 0 || s.value > 100 || l.value < 0 || l.value > 100) return undefined
  const h = (((Number(hue[1]) * HUE_UNITS[hue[2] ?? '']) % 360) + 360) % 360
  const [r, g, b] = hslToRgb(h, s.value / 100, l.value / 100)
  return { r, g, b, a }
}

/** What a colour field allows, for messages. */
export const CSS_COLOR_ALLOWED =
  'a CSS colour: #rgb, #rgba, #rrggbb or #rrggbbaa; rgb()/rgba() with 0-255 or 0-100% channels; hsl()/hsla() with a hue and percentages; or a named colour such as navy or transparent'

/** A colour field of a status page's themeColors (see the notations above). */
export const cssColorSchema = z.string().superRefine((value, ctx) => {
  if (parseCssColor(value) === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `must be ${CSS_COLOR_ALLOWED} (got ${JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value)})`,
      input: value,
    })
  }
})
