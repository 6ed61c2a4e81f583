import { existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'

/*
 * Debian's Chromium driven by playwright-core (its own browser downloads cannot be used here).
 * Where /usr/bin/chromium is missing, browser tests skip with a note, except under CI, which
 * installs the `chromium` package (.ci/run) and must run them.
 */

// evaluated in the page, not in Node (the project's TypeScript has no DOM library)
declare const document: any

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const hasChromium = existsSync(CHROMIUM)
export const SCREENSHOTS = resolve(import.meta.dirname, '../../test-results/screenshots')

if (!hasChromium) {
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: CI installs it (apt-get install chromium in .ci/run)`)
  process.stderr.write(`note: ${CHROMIUM} not found: the browser tests are skipped (Debian: apt-get install chromium)\n`)
}

/** A fresh profile each time: playwright's launch gives Chromium a new temporary --user-data-dir (it refuses one passed in args). */
export async function launch(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return {
    browser,
    close: async () => {
      await browser.close()
    },
  }
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const path = join(SCREENSHOTS, `${name}.png`)
  await page.screenshot({ path, fullPage: true })
  return path
}

/** WCAG 2 contrast ratio of two computed CSS colours (`rgb(r, g, b)`). */
export function contrast(a: string, b: string): number {
  const lum = (color: string) => {
    const [r, g, b] = (color.match(/[\d.]+/g) ?? [])
      .slice(0, 3)
      .map(Number)
      .map((c) => {
        const s = c / 255
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4
      })
    return 0.2126 * r + 0.7152 * g + 0.0722 * b
  }
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x)
  return (hi + 0.05) / (lo + 0.05)
}

/**
 * Presses Tab until focus comes back round, and answers which of the page's controls (links,
 * buttons, inputs, selects) never got focus: every control must be reachable by keyboard.
 */
export async function unreachableByKeyboard(page: Page): Promise<string[]> {
  const controls: string[] = await page.evaluate(() => {
    const all = Array.from(document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea'))
    return all.map((el: any, i: number) => {
      el.setAttribute('data-control', String(i))
      return `${el.tagName.toLowerCase()}:${(el.textContent || el.getAttribute('name') || el.getAttribute('href') || '').trim().slice(0, 40)}`
    })
  })
  const reached = new Set<string>()
  await page.evaluate(() => document.activeElement?.blur())
  for (let i = 0; i < controls.length + 5; i++) {
    await page.keyboard.press('Tab')
    const index = await page.evaluate(() => document.activeElement?.getAttribute('data-control') ?? null)
    if (index !== null) reached.add(index)
  }
  return controls.filter((_c, i) => !reached.has(String(i)))
}

/** Landmarks a screen reader lists: banner, navigation, main, contentinfo (when the page has a footer). */
export async function landmarks(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = []
    const body = document.body
    if (body.querySelector(':scope > header, [role=banner]')) found.push('banner')
    if (body.querySelector('nav, [role=navigation]')) found.push('navigation')
    if (body.querySelectorAll('main, [role=main]').length === 1) found.push('main')
    if (body.querySelector(':scope > footer, [role=contentinfo]')) found.push('contentinfo')
    return found
  })
}
