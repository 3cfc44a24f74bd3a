/** The token of a URL shaped like one of our direct links (any host), or null. */
export function linkToken(url: string): string | null {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return null;
  }
  return /^\/files\/([A-Za-z0-9]{32})(?:\/[^/]*)?$/.exec(pathname)?.[1] ?? null;
}
