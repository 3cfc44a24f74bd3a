import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeDataUrl } from './data-url.ts';
import { kindOfOutput, sniffOutput } from './output-type.ts';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

test('output types are told by their bytes, with the artifact kind they become', async () => {
  const cases: Array<[string, Buffer, string, string | null]> = [
    ['png', PNG, 'png', 'image'],
    ['glb', Buffer.concat([Buffer.from('glTF'), Buffer.alloc(8)]), 'glb', 'document'],
    ['binary fbx', Buffer.from('Kaydara FBX Binary  \0\x1a\0'), 'fbx', 'document'],
    ['ascii fbx', Buffer.from('; FBX 7.4.0 project file\n'), 'fbx', 'document'],
    [
      'svg',
      Buffer.from('<?xml version="1.0"?>\n<!-- drawn -->\n<svg xmlns="http://www.w3.org/2000/svg"/>'),
      'svg',
      'image',
    ],
    ['gif', Buffer.from('GIF89a\x01\0\x01\0\0\0\0;'), 'gif', 'image'],
    ['html is not svg', Buffer.from('<html><svg></svg></html>'), 'bin', null],
    ['text', Buffer.from('hello'), 'bin', null],
    ['empty', Buffer.alloc(0), 'bin', null],
  ];
  for (const [name, bytes, format, kind] of cases) {
    const type = await sniffOutput(bytes);
    assert.equal(type.format, format, name);
    assert.equal(type.kind, kind, name);
    assert.equal(kindOfOutput(type.format), kind, name);
  }
});

test('data URLs: base64 and percent-encoded bytes, capped before decoding', () => {
  const png = decodeDataUrl(`data:image/png;base64,${PNG.toString('base64')}`, 1_000);
  assert.ok(png.ok && png.bytes.equals(PNG) && png.mediaType === 'image/png');
  const raw = decodeDataUrl('data:application/octet-stream,%FF%00a', 10);
  assert.ok(raw.ok && raw.bytes.equals(Buffer.from([0xff, 0x00, 0x61])));
  assert.deepEqual(decodeDataUrl(`data:;base64,${PNG.toString('base64')}`, PNG.length - 1), {
    ok: false,
    reason: `over ${PNG.length - 1} bytes`,
    tooLarge: true,
  });
  assert.equal(decodeDataUrl('data:,%zz', 10).ok, false);
  assert.equal(decodeDataUrl('data:;base64,', 10).ok, false);
  assert.equal(decodeDataUrl('data:image/png;base64', 10).ok, false);
  assert.equal(decodeDataUrl('https://example.org/x.png', 10).ok, false);
});
