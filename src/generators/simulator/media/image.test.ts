import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import type { ImageOutput } from '../../../catalog/model-spec.ts';
import { renderOutput } from './index.ts';
import { buildSvg } from './svg.ts';

function image(over: Partial<ImageOutput>): ImageOutput {
  return {
    kind: 'image',
    format: 'png',
    filename: 'picture.png',
    caption: 'A picture',
    seed: 'image seed',
    width: 320,
    height: 200,
    ...over,
  };
}

/** Number of distinct RGB colours in a decoded PNG (sampled). */
function distinctColours(png: PNG): number {
  const seen = new Set<number>();
  for (let i = 0; i < png.data.length; i += 4 * 7) {
    seen.add((png.data[i]! << 16) | (png.data[i + 1]! << 8) | png.data[i + 2]!);
  }
  return seen.size;
}

describe('image renderers', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'media-image-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const [width, height] of [
    [320, 200],
    [64, 512],
    [1024, 1024],
  ] as const) {
    it(`draws a ${width}×${height} PNG that is not one flat colour`, async () => {
      const file = await renderOutput(image({ width, height }), { dir });
      assert.equal(file.contentType, 'image/png');
      assert.ok(file.path.startsWith(dir) && file.path.endsWith('.png'));
      const bytes = await readFile(file.path);
      assert.equal(file.sizeBytes, bytes.length);
      const png = PNG.sync.read(bytes);
      assert.equal(png.width, width);
      assert.equal(png.height, height);
      assert.ok(distinctColours(png) > 50, 'many colours');
    });
  }

  it('gives different pictures for different seeds and the same for the same seed', async () => {
    const a = await readFile((await renderOutput(image({ seed: 'x' }), { dir })).path);
    const b = await readFile((await renderOutput(image({ seed: 'y' }), { dir })).path);
    const c = await readFile((await renderOutput(image({ seed: 'x' }), { dir })).path);
    assert.notDeepEqual(a, b);
    assert.deepEqual(a, c);
  });

  it('draws a shaded preview of a 3D model', async () => {
    const file = await renderOutput(
      {
        kind: 'image',
        format: 'png',
        filename: 'preview.png',
        caption: '',
        seed: 'preview',
        width: 256,
        height: 256,
        subject: 'mesh',
      },
      { dir },
    );
    const png = PNG.sync.read(await readFile(file.path));
    assert.equal(png.width, 256);
    assert.ok(distinctColours(png) > 50);
    // The centre pixel is on the model, the corner is background.
    const centre = (128 * 256 + 128) * 4;
    assert.notDeepEqual([...png.data.subarray(centre, centre + 3)], [...png.data.subarray(0, 3)]);
  });

  it('writes a well-formed SVG with xmlns, width, height and viewBox', async () => {
    const plan = image({
      format: 'svg',
      filename: 'art.svg',
      width: 800,
      height: 600,
      caption: 'a <b> & "c"',
    });
    const file = await renderOutput(plan, { dir });
    assert.equal(file.contentType, 'image/svg+xml');
    const text = await readFile(file.path, 'utf8');
    assert.ok(text.startsWith('<svg '));
    assert.match(
      text,
      /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="800" height="600" viewBox="0 0 800 600">/,
    );
    assert.ok(text.trimEnd().endsWith('</svg>'));
    assert.ok(!text.includes('<b>'), 'caption escaped');
    // Tags balance: every opened element is closed or self-closing.
    const opened = text.match(/<[a-zA-Z][^>]*[^/]>/g)?.length ?? 0;
    const closed = text.match(/<\/[a-zA-Z]+>/g)?.length ?? 0;
    assert.equal(opened, closed);
    assert.ok((text.match(/<(circle|rect|polygon|path)\b/g)?.length ?? 0) >= 6);
    assert.notEqual(buildSvg(plan), buildSvg({ ...plan, seed: 'other' }));
  });
});
