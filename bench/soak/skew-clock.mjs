// Preloaded into the soak's agent (node --import): its wall clock runs MONITORS_SOAK_CLOCK_SKEW_MS
// ahead (or behind, negative) of the machine's, as on a host whose clock drifted: Date.now() and
// new Date() are shifted; timers and performance.now() are not.
const skew = Number(process.env.MONITORS_SOAK_CLOCK_SKEW_MS ?? 0)
if (skew !== 0) {
  const RealDate = Date
  class SkewedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + skew)
      else super(...args)
    }

    static now() {
      return RealDate.now() + skew
    }
  }
  globalThis.Date = SkewedDate
}
