/**
 * An artifact link of the caller's own task as an input file (`/v1/tasks/<id>/artifacts/<index>`, any
 * host, as for own uploads): read from our storage and probed like a download, never fetched over HTTP
 * (the link needs an API key). This is how a track of our own Suno run reaches `replace_upload`, whose
 * adapter names it upstream by the ids kept with the artifact (PROVIDERS.md §2). A run finds the same
 * file again (`artifactOfTaskInput`) to read it for a provider that takes uploads, or to lend it by a
 * direct link to a provider that fetches URLs.
 */
import { createWriteStream } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ArtifactKind } from '../catalog/index.ts';
import type { Db } from '../db/index.ts';
import { errors } from '../errors.ts';
import { artifactOfLink, type StoredArtifact } from '../generators/index.ts';
import { type Clock, makeTempFolder } from '../lib/index.ts';
import { inspectFile } from '../media/index.ts';
import type { BlobStore } from '../storage/index.ts';
import type { ProbedFile } from './inputs.ts';

export interface ArtifactInputDeps {
  db: Db;
  storage: BlobStore;
  clock: Clock;
}

/** A result file of an account's own succeeded task whose files have not expired: what a run reads or lends. */
export type OwnArtifact = StoredArtifact;

/**
 * The file an artifact link names when it is one of `accountId`'s own: its task succeeded and its files
 * have not expired. Null for any other link, another account's task (it reads as missing, CONTRACT §3),
 * a task of a model outside `models` (a restricted key's, which reads such a task as missing too), an
 * unknown index or expired files.
 */
export async function findOwnArtifact(
  db: Db,
  accountId: string,
  url: string,
  now: Date,
  models: readonly string[] | null = null,
): Promise<OwnArtifact | null> {
  const link = artifactOfLink(url);
  if (link === null || models?.length === 0) return null;
  let query = db.db
    .selectFrom('artifacts')
    .innerJoin('tasks', 'tasks.id', 'artifacts.task_id')
    .select([
      'artifacts.storage_key',
      'artifacts.filename',
      'artifacts.content_type',
      'artifacts.kind',
      'artifacts.size_bytes',
      'tasks.files_expired',
      'tasks.files_expire_at',
    ])
    .where('artifacts.task_id', '=', link.taskId)
    .where('artifacts.idx', '=', link.index)
    .where('tasks.account_id', '=', accountId)
    .where('tasks.status', '=', 'succeeded');
  if (models !== null) query = query.where('tasks.model', 'in', models);
  const row = await query.executeTakeFirst();
  if (!row) return null;
  if (row.files_expired === 1 || row.files_expire_at === null || row.files_expire_at <= now.toISOString())
    return null;
  return {
    accountId,
    storageKey: row.storage_key,
    filename: row.filename,
    contentType: row.content_type,
    kind: row.kind as ArtifactKind,
    sizeBytes: Number(row.size_bytes),
    filesExpireAt: row.files_expire_at,
  };
}

/**
 * The file behind an artifact link among the inputs of task `forTaskId`, when it is an artifact of the
 * same account (findOwnArtifact); null otherwise. A run reads or lends its inputs through this, so a link
 * to another account's file is never usable, whatever the settings say.
 */
export async function artifactOfTaskInput(
  db: Db,
  forTaskId: string,
  url: string,
  now: Date,
): Promise<OwnArtifact | null> {
  if (artifactOfLink(url) === null) return null;
  const task = await db.db
    .selectFrom('tasks')
    .select('account_id')
    .where('id', '=', forTaskId)
    .executeTakeFirst();
  return task ? findOwnArtifact(db, task.account_id, url, now) : null;
}

/**
 * The probed file behind an artifact link of `accountId`'s own succeeded task; null for any other link.
 * Another account's task, a task of a model outside `models` (the caller's key may not read it), an
 * unknown index or expired files are refused as an unreadable input; a file of a type no input takes is
 * 422 file_type.
 */
export async function probeArtifactLink(
  url: string,
  accountId: string,
  label: string,
  deps: ArtifactInputDeps,
  models: readonly string[] | null = null,
): Promise<ProbedFile | null> {
  if (artifactOfLink(url) === null) return null;
  const refused = () =>
    errors.invalidSettings({
      en: `${label}: no file of your tasks at ${url}, or its storage period is over`,
      ru: `${label}: по адресу ${url} нет файла ваших задач, или срок его хранения истёк`,
    });
  const artifact = await findOwnArtifact(deps.db, accountId, url, deps.clock.now(), models);
  if (artifact === null) throw refused();
  const object = await deps.storage.get(artifact.storageKey);
  if (!object) throw refused();
  const dir = await makeTempFolder('artifact');
  try {
    const file = path.join(dir, 'file');
    await pipeline(object.body, createWriteStream(file));
    const inspected = await inspectFile(file, artifact.sizeBytes);
    // The file is there, of a type no input takes (a GLB, FBX or SVG result): a wrong type, as the same
    // file is at any other address (CONTRACT §6), not a missing file.
    if (!inspected) throw errors.fileType(label);
    const { contentType: _type, ...facts } = inspected;
    return { ...facts, sizeBytes: artifact.sizeBytes };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
