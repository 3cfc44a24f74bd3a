/** `decodeURIComponent`, or the text as it came when it is not valid percent-encoding. */
export function decodeOrKeep(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
