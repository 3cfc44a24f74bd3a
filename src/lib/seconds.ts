/**
 * Seconds rounded to the microsecond: the sum or difference of lengths given with two decimals, or
 * probed from files, is off by a floating-point error (16.08 − 6.08 is 9.999999999999998, 1.3 + 8.3 + 5.4
 * is 15.000000000000002), which would refuse a value exactly on a limit.
 */
export function exactSeconds(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}
