import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as fixtures from './fixtures.ts';
import { probeFile } from './probe.ts';
import { ProbePool } from './probe-pool.ts';
import { probeWithMusicMetadata } from './probe-thread.ts';

/** A million entries in each sample table: about 0.6 s of one synchronous parse, about 80 MB of heap. */
const TABLE_ENTRIES = 1_000_000;

const NORMAL: ReadonlyArray<{ name: string; isVideo: boolean; make: (dir: string) => Promise<string> }> = [
  { name: 'mp4', isVideo: true, make: (d) => fixtures.makeMp4(d, 2, 320, 240) },
  { name: 'mp4, moov at the end', isVideo: true, make: (d) => fixtures.makeMp4(d, 1.5, 176, 144, true) },
  { name: 'mp4 with sound', isVideo: true, make: (d) => fixtures.makeMp4WithAudio(d, 2, 160, 120) },
  { name: 'mov', isVideo: true, make: (d) => fixtures.makeMov(d, 1.5, 128, 96) },
  { name: 'm4a', isVideo: false, make: (d) => fixtures.makeM4a(d, 2.5) },
  { name: 'mp3', isVideo: false, make: (d) => fixtures.makeMp3(d, 2.5) },
  { name: 'aac', isVideo: false, make: (d) => fixtures.makeAac(d, 2.5) },
  { name: 'wav', isVideo: false, make: (d) => fixtures.makeWav(d, 2.5) },
  { name: 'ogg', isVideo: false, make: (d) => fixtures.makeOgg(d, 1.7) },
  { name: 'flac', isVideo: false, make: (d) => fixtures.makeFlac(d, 3.2) },
];

describe('probe pool', () => {
  let dir = '';
  let hostile = '';
  const paths = new Map<string, string>();
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'probe-pool-'));
    await Promise.all(NORMAL.map(async (c) => paths.set(c.name, await c.make(dir))));
    hostile = await fixtures.makeMp4WithSampleTables(dir, TABLE_ENTRIES);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('answers in a thread exactly what music-metadata answers on the calling thread', async () => {
    const pool = new ProbePool();
    try {
      for (const c of NORMAL) {
        const job = { path: paths.get(c.name)!, isVideo: c.isVideo };
        const inline = await probeWithMusicMetadata(job);
        assert.ok(inline.durationSeconds, c.name);
        assert.deepEqual(await pool.probe(job.path, job.isVideo), inline, c.name);
      }
      assert.equal(pool.probedInThreads, NORMAL.length);
      assert.equal(pool.abandoned, 0);
    } finally {
      await pool.close();
    }
  });

  it('parses huge sample tables in a thread, not on the calling one, with the usual facts', async () => {
    const pool = new ProbePool();
    try {
      assert.deepEqual(await probeFile(hostile, 'mp4', pool), {
        durationSeconds: 10,
        width: 320,
        height: 240,
      });
      assert.equal(pool.probedInThreads, 1);
      assert.equal(pool.abandoned, 0);
    } finally {
      await pool.close();
    }
  });

  it('gives up a probe past its time limit; the moov reader still finds length and size', async () => {
    const pool = new ProbePool({ timeoutMs: 1 });
    try {
      assert.deepEqual(await probeFile(hostile, 'mp4', pool), {
        durationSeconds: 10,
        width: 320,
        height: 240,
      });
      assert.equal(pool.probedInThreads, 0);
      assert.equal(pool.abandoned, 1);
    } finally {
      await pool.close();
    }
  });

  it('gives up a probe that runs its thread out of memory, and the pool goes on', async () => {
    const pool = new ProbePool({ threads: 1, maxHeapMb: 24 });
    try {
      assert.deepEqual(await pool.probe(hostile, true), {});
      assert.equal(pool.abandoned, 1);
      const path = paths.get('mp4')!;
      assert.deepEqual(await pool.probe(path, true), await probeWithMusicMetadata({ path, isVideo: true }));
      assert.equal(pool.probedInThreads, 1);
    } finally {
      await pool.close();
    }
  });
});
