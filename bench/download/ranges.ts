/**
 * The Range requests of the download bench, rotated request by request: 1 MiB slices at the start, in
 * the middle (unaligned) and at the end, an open-ended `bytes=N-` tail and a suffix `bytes=-N`, which is
 * what players and download managers send when they seek or resume.
 */

const MIB = 1024 * 1024;

/** One asked range and the part of a `size`-byte file it names (both ends inclusive). */
export interface RangeCase {
  header: string;
  start: number;
  end: number;
}

/** The rotated ranges of a file of `size` bytes (at least 4 MiB). */
export function rangeCases(size: number): RangeCase[] {
  if (size < 4 * MIB) throw new Error(`the bench file must be at least 4 MiB, got ${size} bytes`);
  const slice = (start: number): RangeCase => ({
    header: `bytes=${start}-${start + MIB - 1}`,
    start,
    end: start + MIB - 1,
  });
  const tailStart = size - 4 * MIB;
  return [
    slice(0),
    slice(Math.floor(size / 2) + 12_345),
    slice(size - MIB),
    { header: `bytes=${tailStart}-`, start: tailStart, end: size - 1 },
    { header: `bytes=-${MIB}`, start: size - MIB, end: size - 1 },
  ];
}

/** The Content-Range a 206 answer to `range` must carry. */
export function contentRangeOf(range: RangeCase, size: number): string {
  return `bytes ${range.start}-${range.end}/${size}`;
}
