/**
 * Waits for what a test awaits instead of sleeping a fixed time: polls `probe` until it answers
 * a value (anything but undefined, null or false) and returns it, or fails after `timeoutMs`
 * saying what it waited for and the last answer. The timeout is elapsed time (performance.now),
 * never the server's clock a test drives.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<Exclude<T, undefined | null | false>> {
  const { timeoutMs = 10_000, intervalMs = 10, what = 'the condition' } = options
  const end = performance.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>
    if (performance.now() > end) throw new Error(`waited ${timeoutMs} ms for ${what}; last answer: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}
