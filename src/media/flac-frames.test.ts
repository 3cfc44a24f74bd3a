import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeFlac } from './fixtures.ts';
import { countFlacSeconds } from './flac-frames.ts';
import { bufferReader } from './image-size.ts';
import { probeFile } from './probe.ts';

/** The file with STREAMINFO's total samples (36 bits at bytes 21–25 of a file starting `fLaC`) set to `samples`. */
function claiming(file: Buffer, samples: number): Buffer {
  const out = Buffer.from(file);
  assert.equal(out.subarray(0, 4).toString('latin1'), 'fLaC');
  out[21] = (out[21]! & 0xf0) | Math.floor(samples / 2 ** 32);
  out.writeUInt32BE(samples % 2 ** 32, 22);
  return out;
}

describe('FLAC length read from its last frame', () => {
  let dir: string;
  let long: Buffer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gta-flac-'));
    // 8 kHz (makeFlac's rate), 120 s.
    long = await readFile(await makeFlac(dir, 120));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const count = (bytes: Buffer) => countFlacSeconds(bufferReader(bytes), bytes.length);
  const probe = async (bytes: Buffer) => {
    const path = join(dir, `${Math.random()}.flac`);
    await writeFile(path, bytes);
    return (await probeFile(path, 'flac')).durationSeconds;
  };

  it('an honest file is as long as its frames', async () => {
    assert.equal(await count(long), 120);
    assert.equal(await probe(long), 120);
  });

  it('a STREAMINFO that claims 10 s of a 120 s file is not believed: prices and bounds see 120 s', async () => {
    const lying = claiming(long, 10 * 8000);
    assert.equal(await probe(lying), 120);
    // Nor one that claims more than the frames hold.
    assert.equal(await probe(claiming(long, 900 * 8000)), 120);
  });

  it('a file cut short is as long as its whole frames; a trailing ID3v1 tag is no frame', async () => {
    const cut = long.subarray(0, Math.floor(long.length / 2));
    const seconds = (await count(cut)) ?? 0;
    assert.ok(seconds > 50 && seconds < 70, `${seconds} s`);
    const tagged = Buffer.concat([long, Buffer.from('TAG'), Buffer.alloc(125)]);
    assert.equal(await count(tagged), 120);
  });

  it('a file with no whole frame near its end has no length (never the header’s claim)', async () => {
    const junk = Buffer.concat([long, Buffer.alloc(3 * 1024 * 1024, 0x55)]);
    assert.equal(await count(junk), undefined);
    assert.equal(await probe(claiming(junk, 10 * 8000)), undefined);
    // Metadata alone, no audio frame.
    assert.equal(await count(long.subarray(0, 100)), undefined);
  });
});
