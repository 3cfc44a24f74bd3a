/**
 * Singing personas of `music` (reference "Singing personas"): the voice and manner of one song version,
 * saved from a finished task of this model. Decisions: `notes` below.
 */

import { z } from 'zod';
import type { Db } from '../db/index.ts';
import { errors } from '../errors.ts';
import type { LibrarySource } from '../generators/index.ts';
import { timestamp } from '../lib/index.ts';
import { parseArtifactUpstream } from '../tasks/index.ts';
import { defineLibrary } from './define.ts';
import { visibleText } from './fields.ts';
import { boundsOf } from './limits.ts';

const body = z.strictObject({
  source_task_id: z.string().min(1).max(100).describe('id of a succeeded song task of model music'),
  index: z.int().min(0).describe('index of the song version in result.artifacts'),
  name: visibleText(1, 100),
  description: visibleText(1, 500),
  style: z.string().max(1000).optional(),
});

const invalid = (field: string, en: string, ru: string): Error =>
  errors.invalidRequest({ en: `body.${field}: ${en}`, ru: `body.${field}: ${ru}` });

/** The title of song version `index` of a task: texts hold title (and lyrics) of each version in turn. */
function songTitle(texts: string[], audioIndexes: number[], index: number, caption: string): string {
  const position = audioIndexes.indexOf(index);
  const stride = audioIndexes.length > 0 ? texts.length / audioIndexes.length : 0;
  const fromTexts = Number.isInteger(stride) && stride > 0 ? texts[position * stride] : undefined;
  return fromTexts ?? caption.replace(/\s*\(v\d+\)$/, '');
}

async function sourceSong(
  db: Db,
  accountId: string,
  taskId: string,
  index: number,
): Promise<{ songTitle: string; source: LibrarySource | null }> {
  const task = await db.db
    .selectFrom('tasks')
    .select(['id', 'model', 'mode', 'status', 'texts'])
    .where('id', '=', taskId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!task) throw errors.taskNotFound(taskId);
  if (task.model !== 'music') {
    throw invalid('source_task_id', 'must be a task of model music', 'должен быть задачей модели music');
  }
  if (task.status !== 'succeeded') {
    throw invalid('source_task_id', 'the task has not succeeded', 'задача не завершилась успешно');
  }
  if (task.mode === 'sounds') {
    throw invalid('source_task_id', 'sounds have no persona', 'у звуков нет персоны');
  }
  const artifacts = await db.db
    .selectFrom('artifacts')
    .select(['idx', 'kind', 'caption', 'upstream'])
    .where('task_id', '=', taskId)
    .orderBy('idx')
    .execute();
  const audio = artifacts.filter((a) => a.kind === 'audio');
  const chosen = audio.find((a) => Number(a.idx) === index);
  if (!chosen) {
    const known = audio.map((a) => a.idx).join(', ');
    throw invalid(
      'index',
      `must be an audio index of the task (${known})`,
      `должен быть индексом аудио задачи (${known})`,
    );
  }
  const texts = task.texts === null ? [] : (JSON.parse(task.texts) as string[]);
  return {
    source: parseArtifactUpstream(chosen.upstream),
    songTitle: songTitle(
      texts,
      audio.map((a) => Number(a.idx)),
      index,
      chosen.caption,
    ),
  };
}

export const personas = defineLibrary({
  model: 'music',
  segment: 'personas',
  title: 'singing persona',
  body,
  record: z.object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    style: z.string().nullable(),
    song_title: z.string().describe('title of the song it was saved from'),
    created_at: timestamp(),
  }),
  limits: boundsOf(body, ['name', 'description', 'style']),
  // A persona is saved from a finished task: no linked files.
  files: {},
  failCode: 'persona_create_failed',
  refusals: { missing: 'persona_not_found' },
  notes: {
    rules:
      '`source_task_id` must be a task of this account (otherwise `404 task_not_found`, as for tasks; ' +
      'CONTRACT §3: never 403). A task of another model, one that has not succeeded, a sounds task ' +
      '("Sounds have no persona") or an `index` that is not one of its audio files is `422 invalid_request` ' +
      'naming the field.',
    decisions:
      "`song_title` is the title of that version in the task's `result.texts` (CONTRACT §2), else the " +
      "file's caption. One persona per song version among live personas; of two creations from one " +
      'version at once one answers `201` and the other `409 persona_exists`, also when the provider ' +
      'refused it for the first. On a Suno channel a song ' +
      'version whose persona was deleted cannot take another: Suno keeps one persona per track and has no ' +
      'delete call, so the creation answers `502 persona_create_failed` there.',
  },
  async prepare(b, ctx) {
    const song = await sourceSong(ctx.db, ctx.accountId, b.source_task_id, b.index);
    return {
      name: b.name,
      // Reference: one persona per song version.
      uniqueKey: `${b.source_task_id}#${b.index}`,
      data: { description: b.description, style: b.style ?? null, song_title: song.songTitle },
      private: { source_task_id: b.source_task_id, index: b.index },
      // A provider that keeps personas names the song version by its own ids (PROVIDERS.md §2).
      ...(song.source === null ? {} : { source: song.source }),
    };
  },
  taken: () => errors.personaExists(),
});
