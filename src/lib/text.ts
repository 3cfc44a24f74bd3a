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
