/**
 * What a provider's output file is, recognised by its bytes (CONTRACT §11: results get the same type
 * sniffing as inputs). Beside the media formats inputs accept, results may be meshes (glb, fbx), vector
 * pictures (svg), gif and webm; anything else is `bin` and no task artifact kind fits it.
 */
import { fileTypeFromBuffer } from 'file-type';
import type { ArtifactKind, MediaFormat } from '../../catalog/index.ts';
import { kindOf, MEDIA_FORMATS, sniffFormat } from '../../media/index.ts';

/** A sniffed output type; `kind` is null when no artifact kind fits (`bin`). */
export interface OutputType {
  format: string;
  contentType: string;
  kind: ArtifactKind | null;
}

/** Bytes of a file's start `sniffOutput` reads. */
export const OUTPUT_SNIFF_BYTES = 4100;

const UNKNOWN: OutputType = { format: 'bin', contentType: 'application/octet-stream', kind: null };

function startsWith(head: Uint8Array, text: string): boolean {
  return Buffer.from(head.subarray(0, text.length)).toString('latin1') === text;
}

/** An SVG document: XML text whose root element is `svg` (BOM, declaration and comments allowed before it). */
function isSvg(head: Uint8Array): boolean {
  const text = Buffer.from(head)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  const body = text.replace(/^\s*(<\?xml[^>]*\?>\s*)?((<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)\s*)*/i, '');
  return /^<svg[\s>]/i.test(body);
}

/** Recognises an output file from its first bytes (give `OUTPUT_SNIFF_BYTES`, or the whole file). */
export async function sniffOutput(head: Uint8Array): Promise<OutputType> {
  if (head.length === 0) return UNKNOWN;
  const media = await sniffFormat(head);
  if (media) return { format: media.format, contentType: media.contentType, kind: kindOf(media.format) };
  if (startsWith(head, 'glTF')) return { format: 'glb', contentType: 'model/gltf-binary', kind: 'document' };
  if (startsWith(head, 'Kaydara FBX Binary') || startsWith(head, '; FBX'))
    return { format: 'fbx', contentType: 'application/octet-stream', kind: 'document' };
  if (isSvg(head)) return { format: 'svg', contentType: 'image/svg+xml', kind: 'image' };
  const detected = await fileTypeFromBuffer(head.subarray(0, OUTPUT_SNIFF_BYTES));
  switch (detected?.ext) {
    case 'gif':
      return { format: 'gif', contentType: 'image/gif', kind: 'image' };
    case 'webm':
      return { format: 'webm', contentType: 'video/webm', kind: 'video' };
    case 'zip':
      return { format: 'zip', contentType: 'application/zip', kind: 'document' };
    default:
      return UNKNOWN;
  }
}

const KIND_BY_FORMAT: Readonly<Record<string, ArtifactKind>> = {
  glb: 'document',
  fbx: 'document',
  zip: 'document',
  svg: 'image',
  gif: 'image',
  webm: 'video',
};

/** The artifact kind of a format `sniffOutput` reported; null for `bin` and anything unknown. */
export function kindOfOutput(format: string): ArtifactKind | null {
  const known = KIND_BY_FORMAT[format];
  if (known) return known;
  return (MEDIA_FORMATS as readonly string[]).includes(format) ? kindOf(format as MediaFormat) : null;
}
