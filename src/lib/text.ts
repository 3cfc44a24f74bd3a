/**
 * Characters of a text as the length rules count them (code points, as zod's `min`/`max` and JSON
 * Schema's `maxLength` do: an emoji is one), not UTF-16 units.
 */
export function characters(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/**
 * Words that stand for a set (event types a request subscribes to), in one form for comparing requests:
 * each once, sorted, so neither their order nor a repeat tells two requests apart.
 */
export function wordSet(words: readonly string[]): string[] {
  return [...new Set(words)].sort();
}

/**
 * At most `max` UTF-16 units of a text, as a provider's `≤ N` bound may count them, cut before an emoji's
 * surrogate pair rather than inside it (a lone surrogate is not text, and JSON sends it as garbage).
 */
export function cutUnits(text: string, max: number): string {
  if (text.length <= max) return text;
  const high = text.charCodeAt(max - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? max - 1 : max);
}

/** Longest text of the caller's an error message echoes (`echoed`). */
export const ECHOED_CHARS = 100;

/**
 * A caller's text as an error message echoes it: whole up to ECHOED_CHARS, past that cut there (never
 * inside an emoji's surrogate pair) and ended with `…`. A 5,000-character id or a 60,000-character field
 * name is not worth sending back in full.
 */
export function echoed(text: string): string {
  return text.length <= ECHOED_CHARS ? text : `${cutUnits(text, ECHOED_CHARS)}…`;
}

/** An emoji as it is written: a pictograph (or flag letters) with its modifiers, joined sequences included. */
const EMOJI =
  /(?:\p{Extended_Pictographic}|\p{Regional_Indicator})(?:\p{Emoji_Modifier}|\uFE0F|\u20E3|[\u{E0020}-\u{E007F}])*(?:\u200D\p{Extended_Pictographic}(?:\p{Emoji_Modifier}|\uFE0F)*)*|\uFE0F\u20E3?|\u20E3/gu;

/**
 * A text without its emoji, for a provider that refuses them (Tripo's prompts, PROVIDERS.md §1); the
 * spaces an emoji stood between become one, and the ends are trimmed.
 */
export function withoutEmoji(text: string): string {
  if (!/\p{Extended_Pictographic}|\p{Regional_Indicator}|\uFE0F|\u20E3/u.test(text)) return text;
  return text.replace(EMOJI, '').replace(/ {2,}/g, ' ').trim();
}
