import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LibraryRef } from '../catalog/model-spec.ts';
import { createDb, type Db, migrateToLatest } from '../db/index.ts';
import { isApiError } from '../errors.ts';
import { toRow } from './records.ts';
import { resolveReferences } from './references.ts';
import type { LibrarySegment } from './registry.ts';
import type { StoredRecord } from './types.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const now = new Date(T0);
const later = new Date('2026-01-01T01:00:00.000Z');

function record(
  id: string,
  model: string,
  library: LibrarySegment,
  extra: Partial<StoredRecord> = {},
): StoredRecord {
  return {
    id,
    accountId: 'acct-a',
    model,
    library,
    name: id,
    status: 'ready',
    data: {},
    private: {},
    uniqueKey: null,
    error: null,
    createdAt: T0,
    updatedAt: T0,
    readyAt: null,
    deletedAt: null,
    ...extra,
  };
}

const ref = (library: LibraryRef['library'], model: string, id: string, field = 'f'): LibraryRef => ({
  library,
  model,
  id,
  field,
});

async function refusal(db: Db, refs: LibraryRef[], at = now): Promise<string> {
  try {
    await resolveReferences(db, 'acct-a', refs, at);
  } catch (error) {
    assert.ok(isApiError(error));
    assert.equal(error.status, 422);
    return error.code;
  }
  return 'resolved';
}

describe('resolveReferences (CONTRACT §7)', () => {
  let db: Db;
  before(async () => {
    db = createDb('sqlite::memory:');
    await migrateToLatest(db);
    for (const id of ['acct-a', 'acct-b']) {
      await db.db
        .insertInto('accounts')
        .values({ id, name: id, credited_minor: 0, captured_minor: 0, held_minor: 0, created_at: T0 })
        .execute();
    }
    const rows: StoredRecord[] = [
      record('el-1', 'video-elements', 'elements', { status: 'saved', data: { label: 'Element_el-1' } }),
      record('el-deleted', 'video-elements', 'elements', { deletedAt: T0 }),
      record('el-foreign', 'video-elements', 'elements', { accountId: 'acct-b' }),
      record('persona-1', 'music', 'personas', { data: { song_title: 'Sea' } }),
      record('sing-ready', 'music', 'voices'),
      record('sing-processing', 'music', 'voices', { status: 'processing', name: null }),
      record('sing-failed', 'music', 'voices', { status: 'failed', error: 'no match' }),
      record('clone-1', 'voice', 'voices'),
      record('style-vector', 'image', 'styles', { data: { type: 'vector' } }),
      record('style-training', 'music-styles', 'styles', {
        status: 'training',
        readyAt: '2026-01-01T00:07:00.000Z',
        private: { next: { status: 'ready' } },
      }),
      record('char-1', 'video-omni', 'characters'),
      record('omni-voice', 'video-omni', 'voices', { data: { base_voice_id: 'preset-warm-narrator' } }),
    ];
    for (const r of rows) await db.db.insertInto('library_records').values(toRow(r)).execute();
  });
  after(() => db.close());

  test('ready own records resolve to their fields, keyed by id', async () => {
    const resolved = await resolveReferences(
      db,
      'acct-a',
      [
        ref('elements', 'video-elements', 'el-1', 'prompt'),
        ref('personas', 'music', 'persona-1'),
        ref('voices', 'music', 'sing-ready'),
        ref('voices', 'voice', 'clone-1'),
        ref('styles', 'image', 'style-vector'),
        ref('characters', 'video-omni', 'char-1'),
        ref('voices', 'video-omni', 'omni-voice'),
        ref('voices', 'video-omni', 'preset-warm-narrator'),
      ],
      now,
    );
    assert.equal(resolved['style-vector']?.['type'], 'vector');
    assert.equal(resolved['persona-1']?.['song_title'], 'Sea');
    assert.equal(resolved['el-1']?.['label'], 'Element_el-1');
    assert.equal(resolved['preset-warm-narrator']?.['status'], 'ready');
    assert.equal(resolved['preset-warm-narrator']?.['sample_url'], '/samples/preset-warm-narrator.mp3');
    assert.equal(Object.keys(resolved).length, 8);
    // A Kysely handle (for example inside the task's transaction) works as well as the Db.
    assert.ok((await resolveReferences(db, 'acct-a', [ref('voices', 'voice', 'clone-1')], now))['clone-1']);
  });

  test('element_not_found: unknown, deleted, foreign', async () => {
    for (const id of ['nope', 'el-deleted', 'el-foreign']) {
      assert.equal(await refusal(db, [ref('elements', 'video-elements', id)]), 'element_not_found', id);
    }
  });

  test('persona_not_found; a record of another library does not count', async () => {
    assert.equal(await refusal(db, [ref('personas', 'music', 'nope')]), 'persona_not_found');
    assert.equal(await refusal(db, [ref('personas', 'music', 'sing-ready')]), 'persona_not_found');
  });

  test('voice_not_found and voice_not_ready for singing, cloned and omni voices', async () => {
    assert.equal(await refusal(db, [ref('voices', 'music', 'nope')]), 'voice_not_found');
    assert.equal(await refusal(db, [ref('voices', 'music', 'clone-1')]), 'voice_not_found');
    assert.equal(await refusal(db, [ref('voices', 'music', 'sing-processing')]), 'voice_not_ready');
    assert.equal(await refusal(db, [ref('voices', 'music', 'sing-failed')]), 'voice_not_ready');
    assert.equal(await refusal(db, [ref('voices', 'voice', 'nope')]), 'voice_not_found');
    assert.equal(await refusal(db, [ref('voices', 'video-omni', 'nope')]), 'voice_not_found');
  });

  test('style_not_found and style_not_ready; a trained style is ready once its time has passed', async () => {
    assert.equal(await refusal(db, [ref('styles', 'image', 'nope')]), 'style_not_found');
    assert.equal(await refusal(db, [ref('styles', 'music-styles', 'style-vector')]), 'style_not_found');
    assert.equal(await refusal(db, [ref('styles', 'music-styles', 'style-training')]), 'style_not_ready');
    assert.equal(await refusal(db, [ref('styles', 'music-styles', 'style-training')], later), 'resolved');
  });

  test('character_not_found; the first bad reference decides', async () => {
    assert.equal(await refusal(db, [ref('characters', 'video-omni', 'nope')]), 'character_not_found');
    const refs = [ref('characters', 'video-omni', 'char-1'), ref('voices', 'video-omni', 'nope')];
    assert.equal(await refusal(db, refs), 'voice_not_found');
  });
});
