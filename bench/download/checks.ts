import { createHash } from 'node:crypto';
import { contentRangeOf, type RangeCase } from './ranges.ts';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * Checked once, outside the timing, for the app and for nginx alike: the whole file is the same bytes,
 * every rotated Range answers 206 with the right Content-Range and exactly those bytes, and a range past
 * the end answers 416 with `Content-Range: bytes *\/<size>`. Throws on the first difference, so the bench
 * never times a server that answers something else than the landmark.
 */
export async function checkAnswers(
  label: string,
  url: string,
  headers: Readonly<Record<string, string>>,
  file: Buffer,
  ranges: readonly RangeCase[],
): Promise<void> {
  const fail = (what: string): never => {
    throw new Error(`${label}: ${what}`);
  };
  const full = await fetch(url, { headers });
  const body = new Uint8Array(await full.arrayBuffer());
  if (full.status !== 200) fail(`GET answered ${full.status}`);
  if (full.headers.get('content-length') !== String(file.length)) fail('wrong Content-Length');
  if (sha256(body) !== sha256(file)) fail('the downloaded bytes differ from the file');

  for (const range of ranges) {
    const answer = await fetch(url, { headers: { ...headers, range: range.header } });
    const part = Buffer.from(await answer.arrayBuffer());
    if (answer.status !== 206) fail(`${range.header} answered ${answer.status}`);
    const contentRange = answer.headers.get('content-range');
    if (contentRange !== contentRangeOf(range, file.length)) {
      fail(`${range.header}: Content-Range ${contentRange}, expected ${contentRangeOf(range, file.length)}`);
    }
    if (!part.equals(file.subarray(range.start, range.end + 1))) fail(`${range.header}: wrong bytes`);
  }

  const beyond = await fetch(url, { headers: { ...headers, range: `bytes=${file.length}-` } });
  await beyond.arrayBuffer();
  if (beyond.status !== 416) fail(`a range past the end answered ${beyond.status}`);
  if (beyond.headers.get('content-range') !== `bytes */${file.length}`) {
    fail(`416 with Content-Range ${beyond.headers.get('content-range')}`);
  }
}
