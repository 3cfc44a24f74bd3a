/**
 * The provider's ids of a stored artifact (`GeneratedFile.upstream`): what a later run or a library
 * record needs to name the file upstream (PROVIDERS.md §2, Suno's replace-section and personas).
 */
import type { Db, Tx } from '../db/index.ts';

/** A file's provider and its ids there (Suno: `{ taskId, audioId }`). */
export interface ArtifactUpstream {
  provider: string;
  ids: Readonly<Record<string, string>>;
}

/** Parses the stored column; null for a file without ids or a value we did not write. */
export function parseArtifactUpstream(column: string | null): ArtifactUpstream | null {
  if (column === null) return null;
  try {
    const value = JSON.parse(column) as Partial<ArtifactUpstream>;
    if (typeof value.provider !== 'string' || value.ids === null || typeof value.ids !== 'object')
      return null;
    const ids = Object.entries(value.ids).filter((e): e is [string, string] => typeof e[1] === 'string');
    return { provider: value.provider, ids: Object.fromEntries(ids) };
  } catch {
    return null;
  }
}

/** The upstream ids of artifact `index` of task `taskId`, or null when the file has none or is unknown. */
export async function artifactUpstream(
  db: Db['db'] | Tx,
  taskId: string,
  index: number,
): Promise<ArtifactUpstream | null> {
  const row = await db
    .selectFrom('artifacts')
    .select('upstream')
    .where('task_id', '=', taskId)
    .where('idx', '=', index)
    .executeTakeFirst();
  return parseArtifactUpstream(row?.upstream ?? null);
}
