import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import { contentTypeOf, ftypBrands, kindOf, MEDIA_FORMATS, sniffFormat } from './sniff.ts';

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** A leading `ftyp` box with the given major and compatible brands, then an empty `free` box. */
function ftyp(major: string, ...compatible: string[]): Uint8Array {
  const size = 16 + 4 * compatible.length;
  const box = Buffer.alloc(size + 8);
  box.writeUInt32BE(size, 0);
  box.write(`ftyp${major}`, 4, 'latin1');
  for (const [i, brand] of compatible.entries()) box.write(brand, 16 + 4 * i, 'latin1');
  box.writeUInt32BE(8, size);
  box.write('free', size + 4, 'latin1');
  return box;
}

/** A minimal ZIP archive with one stored file. */
function zip(): Uint8Array {
  const data = deflateRawSync(Buffer.from('hello'));
  const header = Buffer.alloc(30);
  header.writeUInt32LE(0x04034b50, 0);
  header.writeUInt16LE(20, 4);
  header.writeUInt16LE(8, 8);
  header.writeUInt32LE(data.length, 18);
  header.writeUInt32LE(5, 22);
  header.writeUInt16LE(5, 26);
  return Buffer.concat([header, Buffer.from('a.txt'), data]);
}

describe('sniffFormat', () => {
  it('refuses things that are not accepted media', async () => {
    for (const head of [
      new Uint8Array(0),
      text('hello, world\n'),
      text('<!doctype html><html></html>'),
      text('%PDF-1.7\n'),
      zip(),
      Uint8Array.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]), // gzip
      text('GIF89a\x01\x00\x01\x00\x00\x00\x00'), // a picture, but not an accepted one
      new Uint8Array(5000),
    ]) {
      assert.equal(await sniffFormat(head), null);
    }
  });

  it('tells MPEG-4 family members apart by the ftyp box', async () => {
    const cases: Array<[Uint8Array, string | null]> = [
      [ftyp('M4A ', 'M4A ', 'mp42', 'isom'), 'm4a'],
      [ftyp('M4B ', 'M4B ', 'isom'), 'm4a'],
      [ftyp('isom', 'isom', 'M4A '), 'm4a'], // generic brand, but only audio brands compatible
      [ftyp('isom', 'isom', 'avc1', 'M4A '), 'mp4'],
      [ftyp('isom', 'isom', 'iso2', 'avc1', 'mp41'), 'mp4'],
      [ftyp('mp42', 'mp42', 'isom'), 'mp4'],
      [ftyp('M4V ', 'M4V ', 'mp42'), 'mp4'],
      [ftyp('qt  ', 'qt  '), 'mov'],
      [ftyp('heic', 'mif1', 'heic'), null],
      [ftyp('avif', 'avif', 'mif1'), null],
      [ftyp('3gp5', '3gp5'), null],
    ];
    for (const [head, format] of cases) {
      assert.equal(
        (await sniffFormat(head))?.format ?? null,
        format,
        Buffer.from(head).toString('latin1', 4, 12),
      );
    }
  });

  it('reports the served Content-Type', async () => {
    assert.deepEqual(await sniffFormat(ftyp('qt  ', 'qt  ')), {
      format: 'mov',
      contentType: 'video/quicktime',
    });
    assert.deepEqual(await sniffFormat(ftyp('M4A ', 'M4A ')), { format: 'm4a', contentType: 'audio/mp4' });
  });
});

describe('helpers', () => {
  it('ftypBrands lists compatible brands, none without ftyp', () => {
    assert.deepEqual(ftypBrands(ftyp('isom', 'isom', 'avc1')), ['isom', 'avc1']);
    assert.deepEqual(ftypBrands(text('no box here at all')), []);
  });

  it('kindOf and contentTypeOf cover every format', () => {
    assert.equal(MEDIA_FORMATS.length, 11);
    assert.deepEqual(
      MEDIA_FORMATS.map((f) => kindOf(f)),
      ['image', 'image', 'image', 'audio', 'audio', 'audio', 'audio', 'audio', 'audio', 'video', 'video'],
    );
    for (const f of MEDIA_FORMATS) assert.match(contentTypeOf(f), new RegExp(`^${kindOf(f)}/`));
  });
});
