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
