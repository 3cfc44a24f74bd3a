import path from 'node:path';

const KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/;

/**
 * Resolves a storage key inside `root`.
 * Security: refuses keys that could climb out of the root (`..`, absolute paths, odd characters).
 */
export function resolveInside(root: string, key: string): string {
  if (!KEY_PATTERN.test(key) || key.split('/').some((part) => part === '..' || part === '.')) {
    throw new Error(`unsafe storage key: ${JSON.stringify(key)}`);
  }
  const full = path.resolve(root, key);
  if (!full.startsWith(path.resolve(root) + path.sep))
    throw new Error(`storage key escapes the root: ${key}`);
  return full;
}
