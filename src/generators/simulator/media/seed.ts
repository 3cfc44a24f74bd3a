/**
 * Deterministic randomness for the simulator's renderers: every drawing, mesh and tune is derived from
 * the plan's `seed` text, so the same plan always gives the same picture and different settings differ.
 */

/** 32-bit FNV-1a hash of a text, mixed with an optional salt so one seed can feed several streams. */
export function hashSeed(seed: string, salt = ''): number {
  let h = 0x811c9dc5;
  const text = salt + '\u0000' + seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // Final avalanche so close seeds spread over the whole range.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** A seeded pseudo-random generator (mulberry32). */
export interface Rng {
  /** Uniform number in [0, 1). */
  next(): number;
  /** Uniform number in [min, max). */
  range(min: number, max: number): number;
  /** Uniform integer in [min, max]. */
  int(min: number, max: number): number;
  /** One element of a non-empty list. */
  pick<T>(items: readonly T[]): T;
}

/** Creates the generator for a seed text (and an optional salt naming the stream). */
export function createRng(seed: string, salt = ''): Rng {
  let state = hashSeed(seed, salt);
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    range: (min, max) => min + (max - min) * next(),
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)]!,
  };
}

/** RGB colour with channels 0–255. */
export type Rgb = readonly [number, number, number];

/** Converts hue (0–360), saturation and lightness (0–1) to RGB. */
export function hsl(h: number, s: number, l: number): Rgb {
  const k = (n: number): number => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number): number => l - a * Math.max(-1, Math.min(k(n) - 3, 9 - k(n), 1));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

/** `#rrggbb` form of a colour. */
export function hex(color: Rgb): string {
  return '#' + color.map((c) => c.toString(16).padStart(2, '0')).join('');
}
