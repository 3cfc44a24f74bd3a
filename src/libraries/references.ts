/**
 * Library items named in task settings (CONTRACT §7): an unknown, deleted, foreign or not-ready item is
 * refused before any hold with the code of its library. The task service calls `resolveReferences`
 * while accepting or pricing a task; the answer carries the records' fields (an image style's `type`
 * decides SVG or PNG).
 */
import type { LibraryRef } from '../catalog/index.ts';
import type { Db } from '../db/index.ts';
import { errors } from '../errors.ts';
import { presetSamplePath } from './preset-samples.ts';
import { liveRecords, type StepAsker, transition } from './records.ts';
import { findLibrary } from './registry.ts';
import type { LibraryDecl } from './types.ts';

/** A ready preset of the library that anyone may name beside their own items (omni voices). */
function preset(decl: LibraryDecl, ref: LibraryRef): Record<string, unknown> | undefined {
  const found = decl.presets?.find((p) => p.id === ref.id);
  // Its stored sample goes to providers that take a voice as a recording (preset-samples.ts).
  return found
    ? {
        ...found,
        model: ref.model,
        library: ref.library,
        preset: true,
        sample_url: presetSamplePath(found.id),
      }
    : undefined;
}

/**
 * Checks every reference in order and throws the first refusal (422 element_not_found … character_not_found,
 * voice_not_ready, style_not_ready). Returns each record's fields keyed by id:
 * `{ id, model, library, name, status, ...data, upstream_id? }`. With `ask`, due steps a provider ends are
 * asked about first (polled-steps.ts).
 */
export async function resolveReferences(
  db: Db,
  accountId: string,
  refs: readonly LibraryRef[],
  now: Date,
  ask?: StepAsker,
): Promise<Record<string, Record<string, unknown>>> {
  const live = await liveRecords(db.db, accountId, [...new Set(refs.map((r) => r.id))], now);
  // A step the provider ends is asked about here too, so a voice verified upstream is usable at once.
  const records = ask
    ? await Promise.all(
        live.map(async (r) => {
          const after = await ask(r, now);
          await transition(db, r, after);
          return after;
        }),
      )
    : live;
  const resolved: Record<string, Record<string, unknown>> = {};
  for (const ref of refs) {
    const decl = findLibrary(ref.model, ref.library);
    // The catalog names only registered libraries; anything else is our bug.
    if (!decl) throw errors.internal(new Error(`no library ${ref.model}/${ref.library}`));
    const { missing, notReady = missing } = decl.refusals;
    const fixed = preset(decl, ref);
    if (fixed) {
      resolved[ref.id] = fixed;
      continue;
    }
    const record = records.find((r) => r.id === ref.id && r.model === ref.model && r.library === ref.library);
    if (!record) throw errors.libraryItem(missing, ref.id);
    if (decl.states && record.status !== 'ready') throw errors.libraryItem(notReady, ref.id);
    resolved[ref.id] = {
      id: record.id,
      model: record.model,
      library: record.library,
      name: record.name,
      status: record.status,
      ...record.data,
      // The provider's id of the record, for the adapter that runs the task (never shown).
      ...(typeof record.private.upstream_id === 'string' ? { upstream_id: record.private.upstream_id } : {}),
      // The channel that made the record: the task runs there only (CONTRACT §11; never shown).
      ...(typeof record.private.channel === 'string' ? { channel: record.private.channel } : {}),
    };
  }
  return resolved;
}
