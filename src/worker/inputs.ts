/**
 * Inputs a queued task still needs (issue decision, docs/decisions.md "Tasks"): a task's stored `inputs`
 * name the probed URL files and the library records its settings use. Before the worker starts a run it
 * checks that our own uploads among them are neither deleted nor expired, that the caller's result files
 * among them are still stored, and that the records are still there; otherwise the task fails with
 * `input_unavailable` and its hold is voided. Outside links are the caller's: we never fetch them again
 * here, the provider does.
 */
import type { LibraryRef, ModeInputs, ModelSpec } from '../catalog/index.ts';
import type { Db, TasksTable } from '../db/index.ts';
import { ApiError } from '../errors.ts';
import { isLiveAt } from '../files/index.ts';
import { artifactOfLink, GenerationError, type GenerationRequest } from '../generators/index.ts';
import { type LibrarySegment, resolveReferences } from '../libraries/index.ts';
import { findOwnArtifact } from '../tasks/index.ts';

/** The path of our direct links (UploadService.byUrl recognises the same form, whatever the host). */
const OWN_LINK = /^\/files\/([A-Za-z0-9]{32})(?:\/[^/]*)?$/;

function tokenOf(url: string): string | null {
  try {
    return OWN_LINK.exec(new URL(url).pathname)?.[1] ?? null;
  } catch {
    return null;
  }
}

/** Why the task cannot run (for its error message), or null when everything it needs is still there. */
export async function missingInput(db: Db, task: TasksTable, now: Date): Promise<string | null> {
  const inputs = JSON.parse(task.inputs) as Partial<ModeInputs>;
  for (const file of inputs.files ?? []) {
    if (artifactOfLink(file.url) !== null) {
      // A result file of the caller's (checked at acceptance) whose task's files expired meanwhile.
      if ((await findOwnArtifact(db, task.account_id, file.url, now)) === null)
        return `settings.${file.field}.${file.position}: the result file is no longer stored`;
      continue;
    }
    const token = tokenOf(file.url);
    if (token === null) continue;
    const upload = await db.db
      .selectFrom('uploads')
      .select((eb) => isLiveAt(now)(eb).as('live'))
      .where('token', '=', token)
      .executeTakeFirst();
    // No record: the link was not one of ours at acceptance and was downloaded like any other URL.
    if (!upload) continue;
    // Live as its link is (files/upload-holds.ts): an upload a library record holds outlives its expiry.
    if (!upload.live) {
      return `settings.${file.field}.${file.position}: the uploaded file was deleted or expired`;
    }
  }
  const refs: LibraryRef[] = Object.values(inputs.records ?? {})
    .filter((record) => record.preset !== true)
    .map((record) => ({
      model: String(record.model),
      library: String(record.library) as LibrarySegment,
      id: String(record.id),
      field: 'settings',
    }));
  if (refs.length === 0) return null;
  try {
    await resolveReferences(db, task.account_id, refs, now);
    return null;
  } catch (error) {
    // A refusal (element_not_found, style_not_ready …) means the item is gone; a database error is not one.
    if (!(error instanceof ApiError)) throw error;
    return `a library item the settings name is gone (${error.code})`;
  }
}

/**
 * The channel the task must run on: the one that made the library records its settings name (their
 * upstream ids exist only in that channel's account), or null when none names one (CONTRACT §11).
 * Records of two different channels cannot be used together: the task cannot run.
 */
export function channelOfRecords(task: Pick<TasksTable, 'inputs'>): string | null {
  const inputs = JSON.parse(task.inputs) as Partial<ModeInputs>;
  const channels = new Set(
    Object.values(inputs.records ?? {})
      .map((record) => record['channel'])
      .filter((channel): channel is string => typeof channel === 'string'),
  );
  if (channels.size > 1) {
    throw new GenerationError(
      'input_unavailable',
      `the library items the settings name were made at different channels (${[...channels].sort().join(', ')})`,
    );
  }
  return [...channels][0] ?? null;
}

/** What the generator is asked for a task: its model's mode, settings, inputs and plan. */
export function requestOf(
  findModel: (key: string) => ModelSpec | undefined,
  task: TasksTable,
): GenerationRequest {
  const model = findModel(task.model);
  const mode = model?.modes.find((m) => m.name === task.mode);
  if (!model || !mode)
    throw new GenerationError('generation_failed', `model ${task.model}/${task.mode} is gone`);
  const settings = JSON.parse(task.settings) as Record<string, unknown>;
  const inputs = JSON.parse(task.inputs) as GenerationRequest['inputs'];
  return {
    taskId: task.id,
    model: model.key,
    mode: mode.name,
    settings,
    inputs,
    plan: mode.plan(settings, inputs),
  };
}
