import { makeBadge } from 'badge-maker'
import type { CheckStatusRecord } from '../store/index.js'

export const BADGE_STYLES = ['flat', 'plastic', 'flat-square', 'for-the-badge', 'social'] as const
export const BADGE_THEMES = ['default', 'light', 'dark'] as const
export type BadgeStyle = (typeof BADGE_STYLES)[number]
export type BadgeTheme = (typeof BADGE_THEMES)[number]
export type BadgeState = 'passing' | 'degraded' | 'failing' | 'paused' | 'unknown'

/*
 * Colours per theme (badge-maker picks dark or light text for each background itself):
 * - default: the usual shields colours, grey label.
 * - light: pale backgrounds for light pages.
 * - dark: deep backgrounds for dark pages.
 */
const PALETTES: Record<BadgeTheme, { label: string } & Record<BadgeState, string>> = {
  default: { label: '#555', passing: '#4c1', degraded: '#dfb317', failing: '#e05d44', paused: '#9f9f9f', unknown: '#9f9f9f' },
  light: { label: '#e5e7eb', passing: '#bbf7d0', degraded: '#fde68a', failing: '#fecaca', paused: '#f3f4f6', unknown: '#f3f4f6' },
  dark: { label: '#1f2937', passing: '#166534', degraded: '#92400e', failing: '#991b1b', paused: '#374151', unknown: '#374151' },
}

/** paused (activated false) before anything else; unknown when the check never ran */
export function badgeState(activated: boolean, status: CheckStatusRecord | undefined): BadgeState {
  if (!activated) return 'paused'
  if (!status) return 'unknown'
  if (status.hasFailures || status.hasErrors) return 'failing'
  if (status.isDegraded) return 'degraded'
  return 'passing'
}

/** the state, plus the newest run's response time (`passing | 42 ms`) when asked and measured */
export function badgeMessage(state: BadgeState, status: CheckStatusRecord | undefined, responseTime: boolean): string {
  const ms = status?.lastResponseTime
  if (!responseTime || state === 'paused' || ms === null || ms === undefined) return state
  return `${state} | ${Math.round(ms)} ms`
}

/**
 * A group's state from its checks' newest runs (a paused check's too: a triggered run counts):
 * paused when the group is deactivated; failing when one is, else degraded when one is, else
 * passing when one ran; unknown when none ran.
 */
export function groupBadgeState(activated: boolean, members: ReadonlyArray<{ status: CheckStatusRecord | undefined }>): BadgeState {
  if (!activated) return 'paused'
  const states = members.map((m) => badgeState(true, m.status))
  for (const state of ['failing', 'degraded', 'passing'] as const) if (states.includes(state)) return state
  return 'unknown'
}

export function renderBadge(options: {
  name: string
  activated: boolean
  status: CheckStatusRecord | undefined
  style: BadgeStyle
  theme: BadgeTheme
  responseTime: boolean
  state?: BadgeState
}): string {
  const state = options.state ?? badgeState(options.activated, options.status)
  const palette = PALETTES[options.theme]
  return makeBadge({
    label: options.name,
    message: badgeMessage(state, options.status, options.responseTime),
    labelColor: palette.label,
    color: palette[state],
    style: options.style,
  })
}
