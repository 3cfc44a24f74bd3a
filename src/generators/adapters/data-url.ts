/** A decoded `data:` URL, or why it cannot be one. */
export type DecodedDataUrl =
  | { ok: true; bytes: Buffer; mediaType: string }
  | { ok: false; reason: string; tooLarge?: true };

/**
 * Decodes a `data:[<media type>][;base64],<data>` URL (RFC 2397), refusing one whose bytes would be more
 * than `maxBytes`: the size is worked out from the text before anything is decoded, so an oversized URL
 * never costs its decoded copy in memory.
 */
export function decodeDataUrl(url: string, maxBytes: number): DecodedDataUrl {
  const comma = url.indexOf(',');
  if (!url.startsWith('data:') || comma < 0) return { ok: false, reason: 'not a data URL' };
  const meta = url.slice(5, comma);
  const data = url.slice(comma + 1);
  const base64 = /;base64$/i.test(meta);
  const mediaType = (base64 ? meta.slice(0, -7) : meta).split(';')[0]?.trim() || 'text/plain';
  if (base64) {
    const clean = data.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) return { ok: false, reason: 'invalid base64' };
    const estimated = Math.floor((clean.replace(/=+$/, '').length * 3) / 4);
    if (estimated > maxBytes) return { ok: false, reason: `over ${maxBytes} bytes`, tooLarge: true };
    const bytes = Buffer.from(clean, 'base64');
    if (bytes.length === 0) return { ok: false, reason: 'empty' };
    return { ok: true, bytes, mediaType };
  }
  // Percent-encoded text: each byte takes at least one character, so the text's length bounds the size.
  if (data.length > maxBytes * 3) return { ok: false, reason: `over ${maxBytes} bytes`, tooLarge: true };
  const bytes = percentDecode(data);
  if (!bytes) return { ok: false, reason: 'invalid percent-encoding' };
  if (bytes.length > maxBytes) return { ok: false, reason: `over ${maxBytes} bytes`, tooLarge: true };
  if (bytes.length === 0) return { ok: false, reason: 'empty' };
  return { ok: true, bytes, mediaType };
}

/** Percent-decoding to bytes (not to text: `%FF` is the byte 255, which decodeURIComponent refuses). */
function percentDecode(text: string): Buffer | null {
  const raw = Buffer.from(text, 'utf8');
  const out = Buffer.alloc(raw.length);
  let size = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] !== 0x25) {
      out[size++] = raw[i] as number;
      continue;
    }
    const hex = raw.subarray(i + 1, i + 3).toString('latin1');
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) return null;
    out[size++] = Number.parseInt(hex, 16);
    i += 2;
  }
  return out.subarray(0, size);
}
