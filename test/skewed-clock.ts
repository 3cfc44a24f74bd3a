/**
 * Preloaded into a child process (`--import`) to give it a machine clock that is off by
 * `TEST_CLOCK_SKEW_MS` milliseconds: `Date.now()` and `new Date()` answer the skewed time, as on a host
 * whose clock drifted. The database's own clock is untouched.
 */
const skewMs = Number(process.env.TEST_CLOCK_SKEW_MS ?? 0);
const RealDate = Date;

class SkewedDate extends RealDate {
  constructor(...args: ConstructorParameters<DateConstructor> | []) {
    if (args.length === 0) super(RealDate.now() + skewMs);
    else super(...(args as ConstructorParameters<DateConstructor>));
  }

  static override now(): number {
    return RealDate.now() + skewMs;
  }
}

globalThis.Date = SkewedDate as DateConstructor;
