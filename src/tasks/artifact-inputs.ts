/**
 * An artifact link of the caller's own task as an input file (`/v1/tasks/<id>/artifacts/<index>`, any
 * host, as for own uploads): read from our storage and probed like a download, never fetched over HTTP
 * (the link needs an API key). This is how a track of our own Suno run reaches `replace_upload`, whose
 * adapter names it upstream by the ids kept with the artifact (PROVIDERS.md §2).
 */
import { createWriteStream } from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Db } from '../db/index.ts';
import { errors } from '../errors.ts';
import { artifactOfLink } from '../generators/index.ts';
import type { Clock } from '../lib/index.ts';
import { inspectFile } from '../media/index.ts';
import type { BlobStore } from '../storage/index.ts';
import type { ProbedFile } from './inputs.ts';

export interface ArtifactInputDeps {
  db: Db;
  storage: BlobStore;
  clock: Clock;
}

/**
 * The probed file behind an artifact link of `accountId`'s own succeeded task; null for any other link.
 * Another account's task, an unknown index or expired files are refused as an unreadable input.
 */
export async function probeArtifactLink(
  url: string,
  accountId: string,
  label: string,
  deps: ArtifactInputDeps,
): Promise<ProbedFile | null> {
  const link = artifactOfLink(url);
  if (link === null) return null;
  const refused = () =>
    errors.invalidSettings({
      en: `${label}: no file of your tasks at ${url}`,
      ru: `${label}: по адресу ${url} нет файла ваших задач`,
    });
  const row = await deps.db.db
    .selectFrom('artifacts')
    .innerJoin('tasks', 'tasks.id', 'artifacts.task_id')
    .select(['artifacts.storage_key', 'artifacts.size_bytes', 'tasks.files_expired', 'tasks.files_expire_at'])
    .where('artifacts.task_id', '=', link.taskId)
    .where('artifacts.idx', '=', link.index)
    .where('tasks.account_id', '=', accountId)
    .where('tasks.status', '=', 'succeeded')
    .executeTakeFirst();
  // Another account's file reads as missing, like its task (CONTRACT §3: never 403).
  if (!row) throw refused();
  const expired = row.files_expired === 1 || (row.files_expire_at ?? '') <= deps.clock.now().toISOString();
  if (expired) throw refused();
  const object = await deps.storage.get(row.storage_key);
  if (!object) throw refused();
  const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'gta-artifact-'));
  try {
    const file = path.join(dir, 'file');
    await pipeline(object.body, createWriteStream(file));
    const sizeBytes = Number(row.size_bytes);
    const inspected = await inspectFile(file, sizeBytes);
    if (!inspected) throw refused();
    const { contentType: _type, ...facts } = inspected;
    return { ...facts, sizeBytes };
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}
