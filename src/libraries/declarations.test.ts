import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { errors } from '../errors.ts';
import { boundsOf, limitsOf, MAX_RECORDS_PER_LIBRARY } from './limits.ts';
import { LIBRARIES, libraryPath } from './registry.ts';

const AUDIO = { formats: ['mp3', 'wav', 'ogg', 'm4a', 'flac', 'aac'], max_size_mb: 20 };
const IMAGE = { formats: ['jpeg', 'png', 'webp'], max_size_mb: 10 };
const NAME = { min_length: 1, max_length: 100 };
const DESCRIPTION = { min_length: 0, max_length: 500 };

/** Every list shows how many live records the library holds at most. */
const RECORDS = { min: 0, max: MAX_RECORDS_PER_LIBRARY };

/** The list responses' `limits` as the API has always shown them, keys in their order. */
const SHOWN_LIMITS: Readonly<Record<string, unknown>> = {
  '/v1/models/video-elements/elements': {
    name: NAME,
    description: DESCRIPTION,
    image_urls: { min_items: 1, max_items: 4 },
    video_url: { min_items: 1, max_items: 1 },
    records: RECORDS,
    accepted_files: {
      image_urls: IMAGE,
      video_url: { formats: ['mp4', 'mov'], max_size_mb: 100, max_duration_seconds: 8 },
    },
  },
  '/v1/models/music/personas': {
    name: NAME,
    description: { min_length: 1, max_length: 500 },
    style: { min_length: 0, max_length: 1000 },
    records: RECORDS,
  },
  '/v1/models/music/voices': {
    piece_seconds: { min: 10, max: 240 },
    recording_seconds: { min: 3 },
    name: NAME,
    language: 'ISO 639-1 code, default en',
    records: RECORDS,
    accepted_files: { source_url: AUDIO, recording_url: AUDIO },
  },
  '/v1/models/voice/voices': {
    name: NAME,
    sample_urls: { min_items: 1, max_items: 10 },
    records: RECORDS,
    accepted_files: { sample_urls: AUDIO },
  },
  '/v1/models/image/styles': {
    name: NAME,
    image_urls: { min_items: 1, max_items: 10 },
    types: ['raster', 'vector'],
    records: RECORDS,
    accepted_files: { image_urls: IMAGE },
  },
  '/v1/models/music-styles/styles': {
    name: NAME,
    description: DESCRIPTION,
    track_urls: { min_items: 1, max_items: 10 },
    training_minutes: { min: 5, max: 10 },
    records: RECORDS,
    accepted_files: { track_urls: AUDIO },
  },
  '/v1/models/video-omni/characters': {
    name: NAME,
    description: DESCRIPTION,
    records: RECORDS,
    accepted_files: { portrait_url: IMAGE, full_body_url: IMAGE },
  },
  '/v1/models/video-omni/voices': {
    name: NAME,
    sample_urls: { min_items: 1, max_items: 3 },
    records: RECORDS,
    accepted_files: { sample_urls: AUDIO },
  },
};

describe('library declarations (CONTRACT §7)', () => {
  test('limits derived from the bodies and file rules show what they always showed', () => {
    assert.deepEqual(Object.keys(SHOWN_LIMITS), LIBRARIES.map(libraryPath));
    for (const decl of LIBRARIES) {
      const path = libraryPath(decl);
      assert.equal(JSON.stringify(limitsOf(decl)), JSON.stringify(SHOWN_LIMITS[path]), path);
    }
  });

  test('bounds are read from the schema: what the body refuses is what the list shows', () => {
    const body = z.strictObject({
      name: z.string().trim().min(2).max(5),
      tags: z.array(z.string()).min(1).max(3),
      note: z.string().max(9).optional(),
      cover_url: z.string(),
    });
    assert.deepEqual(boundsOf(body, ['note', 'name', 'tags', 'cover_url']), {
      note: { min_length: 0, max_length: 9 },
      name: { min_length: 2, max_length: 5 },
      tags: { min_items: 1, max_items: 3 },
      cover_url: { min_items: 1, max_items: 1 },
    });
    assert.throws(() => boundsOf(z.object({ free: z.string() }), ['free']), /free: not a bounded/);
  });

  test('states: learning kinds start in a declared state, records show the declared states', () => {
    for (const decl of LIBRARIES) {
      const path = libraryPath(decl);
      const shape = (decl.record as z.ZodObject).shape as Record<string, z.ZodType>;
      if (!decl.states) {
        assert.equal(shape['status'], undefined, `${path}: records without states show no status`);
        assert.equal(decl.learns, undefined, path);
        continue;
      }
      assert.ok(decl.states.includes('ready'), path);
      assert.deepEqual((shape['status'] as z.ZodEnum).options, decl.states, path);
      if (decl.learns) {
        assert.ok(decl.states.includes(decl.learns.initial), path);
        assert.ok(decl.states.includes('failed'), `${path}: learning can fail`);
        assert.ok(decl.learns.typicalMs > 0, path);
      }
    }
  });

  test('refusal codes are codes of the error table', () => {
    for (const decl of LIBRARIES) {
      const { missing, notReady } = decl.refusals;
      for (const code of [missing, notReady].filter((c) => c !== undefined)) {
        assert.equal(errors.libraryItem(code, 'x').status, 422, `${libraryPath(decl)}: ${code}`);
      }
      assert.equal(errors.createFailed(decl.failCode).status, 502, libraryPath(decl));
      if (!decl.states)
        assert.equal(notReady, undefined, `${libraryPath(decl)}: only kinds with states wait`);
    }
  });
});
