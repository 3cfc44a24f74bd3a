/**
 * Library items named in task settings (CONTRACT §7): an unknown, deleted, foreign or not-ready item is
 * refused before any hold with the code of its library. The task service calls `resolveReferences`
 * while accepting or pricing a task; the answer carries the records' fields (an image style's `type`
 * decides SVG or PNG).
 */
import { Kysely } from 'kysely';
import type { LibraryRef } from '../catalog/model-spec.ts';
import type { Database, Db, LibrarySegment } from '../db/index.ts';
import { errors } from '../errors.ts';
import { OMNI_PRESETS } from './others.ts';
import { liveRecords } from './records.ts';
import { findLibrary } from './registry.ts';

type ItemCode = Parameters<typeof errors.libraryItem>[0];

/** CONTRACT §7 codes per library segment: not found, and not ready where the library learns or waits. */
const CODES: Record<LibrarySegment, { missing: ItemCode; notReady: ItemCode | null }> = {
  elements: { missing: 'element_not_found', notReady: null },
  personas: { missing: 'persona_not_found', notReady: null },
  voices: { missing: 'voice_not_found', notReady: 'voice_not_ready' },
  styles: { missing: 'style_not_found', notReady: 'style_not_ready' },
  characters: { missing: 'character_not_found', notReady: null },
};

/** Ready voices anyone may use in `audio_ids` beside their own (reference "Other libraries"). */
function preset(ref: LibraryRef): Record<string, unknown> | undefined {
  if (ref.model !== 'video-omni' || ref.library !== 'voices') return undefined;
  const found = OMNI_PRESETS.find((p) => p.id === ref.id);
  return found ? { ...found, model: ref.model, library: ref.library, preset: true } : undefined;
}

/**
 * Checks every reference in order and throws the first refusal (422 element_not_found … character_not_found,
 * voice_not_ready, style_not_ready). Returns each record's fields keyed by id:
 * `{ id, model, library, name, status, ...data }`.
 */
export async function resolveReferences(
  db: Db | Kysely<Database>,
  accountId: string,
  refs: readonly LibraryRef[],
  now: Date,
): Promise<Record<string, Record<string, unknown>>> {
  const handle = db instanceof Kysely ? db : db.db;
  const records = await liveRecords(handle, accountId, [...new Set(refs.map((r) => r.id))], now);
  const resolved: Record<string, Record<string, unknown>> = {};
  for (const ref of refs) {
    const codes = CODES[ref.library];
    const fixed = preset(ref);
    if (fixed) {
      resolved[ref.id] = fixed;
      continue;
    }
    const record = records.find((r) => r.id === ref.id && r.model === ref.model && r.library === ref.library);
    if (!record) throw errors.libraryItem(codes.missing, ref.id);
    const decl = findLibrary(ref.model, ref.library);
    if (decl?.hasStatus && record.status !== 'ready')
      throw errors.libraryItem(codes.notReady ?? codes.missing, ref.id);
    resolved[ref.id] = {
      id: record.id,
      model: record.model,
      library: record.library,
      name: record.name,
      status: record.status,
      ...record.data,
    };
  }
  return resolved;
}
