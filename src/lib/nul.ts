/**
 * Parsed JSON, forms, queries and path parameters are walked (the router's parameters inherit from a
 * prototype-less object); a Buffer or a stream body is not.
 */
function isWalkable(node: unknown): node is Record<string, unknown> {
  if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node)) return false;
  return typeof (node as { pipe?: unknown }).pipe !== 'function';
}

/**
 * True when a request's decoded values hold the NUL character (U+0000) in any string or property name,
 * at any depth: path parameters, query values, a parsed JSON or form body, cookies. PostgreSQL text cannot
 * hold the character, so the service refuses it in every request on both engines.
 */
export function hasNul(value: unknown): boolean {
  // Most values a request holds are absent or a string: no walk, nothing allocated (a poll asks four times).
  if (typeof value === 'string') return value.includes('\u0000');
  if (!isWalkable(value)) return false;
  // Iterative: a body's depth is capped at parsing, but a walk should not depend on it.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return true;
    } else if (Array.isArray(node)) {
      for (const child of node) stack.push(child);
    } else if (isWalkable(node)) {
      for (const [key, child] of Object.entries(node)) {
        if (key.includes('\u0000')) return true;
        stack.push(child);
      }
    }
  }
  return false;
}
