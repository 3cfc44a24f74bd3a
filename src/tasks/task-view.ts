import type { ArtifactKind } from '../catalog/index.ts';
import type { ArtifactsTable, TasksTable } from '../db/index.ts';
import type { TaskFailureCode } from '../errors.ts';
import { type Lang, translate } from '../i18n/index.ts';
import { CURRENCY } from '../ledger/index.ts';
import { scrubSecrets } from '../observability/index.ts';
import { isFinal } from './transitions.ts';

export interface ArtifactView {
  index: number;
  kind: ArtifactKind;
  filename: string;
  content_type: string;
  size: number;
  caption: string;
  download_path: string;
}

export interface TaskView {
  id: string;
  model: string;
  mode: string;
  status: TasksTable['status'];
  settings: Record<string, unknown>;
  price: { amount_minor: number; currency: string };
  progress: number;
  created_at: string;
  started_at: string | null;
  /** Final states only (CONTRACT §3), as `result` is succeeded only. */
  finished_at?: string;
  result?: {
    caption: string;
    texts: string[];
    files_expire_at: string;
    files_expired: boolean;
    artifacts: ArtifactView[];
  };
  error?: { code: string; message: string };
}

/** What a view shows of one result file: the columns of its `artifacts` row that views read. */
export type ArtifactFacts = Pick<
  ArtifactsTable,
  'idx' | 'kind' | 'filename' | 'content_type' | 'size_bytes' | 'caption'
>;

/** The text kept in `tasks.artifact_views` for these files (written by the move to succeeded). */
export function artifactViewsJson(artifacts: readonly ArtifactFacts[]): string {
  return JSON.stringify(
    artifacts.map(({ idx, kind, filename, content_type, size_bytes, caption }) => ({
      idx,
      kind,
      filename,
      content_type,
      size_bytes,
      caption,
    })),
  );
}

/**
 * The files a succeeded task's row keeps for its views; null when it keeps none (it succeeded before
 * migration 0027): its `artifacts` rows are read instead.
 */
export function keptArtifacts(row: TasksTable): ArtifactFacts[] | null {
  return row.artifact_views === null ? null : (JSON.parse(row.artifact_views) as ArtifactFacts[]);
}

/** The task as the API shows it (reference "Task", CONTRACT §3); error messages in the caller's language. */
export function toTaskView(
  row: TasksTable,
  artifacts: readonly ArtifactFacts[],
  lang: Lang,
  now: Date,
): TaskView {
  const view: TaskView = {
    id: row.id,
    model: row.model,
    mode: row.mode,
    status: row.status,
    settings: JSON.parse(row.settings) as Record<string, unknown>,
    price: { amount_minor: Number(row.price_minor), currency: row.currency || CURRENCY },
    progress: row.progress,
    created_at: row.created_at,
    started_at: row.started_at,
  };
  if (isFinal(row.status) && row.finished_at !== null) view.finished_at = row.finished_at;
  if (row.status === 'succeeded') {
    const expireAt = row.files_expire_at ?? row.finished_at ?? row.created_at;
    view.result = {
      caption: row.caption ?? '',
      texts: row.texts ? (JSON.parse(row.texts) as string[]) : [],
      files_expire_at: expireAt,
      files_expired: row.files_expired === 1 || expireAt <= now.toISOString(),
      artifacts: [...artifacts]
        .sort((a, b) => a.idx - b.idx)
        .map((a) => ({
          index: a.idx,
          kind: a.kind as ArtifactKind,
          filename: a.filename,
          content_type: a.content_type,
          size: Number(a.size_bytes),
          caption: a.caption,
          download_path: `/v1/tasks/${row.id}/artifacts/${a.idx}`,
        })),
    };
  }
  if (row.status === 'failed' && row.error_code) {
    const code = row.error_code as TaskFailureCode;
    view.error = { code, message: failureMessage(code, row.error_message, lang) };
  }
  return view;
}

/** Longest reason a failure message quotes; a provider's error page may be long. */
const MAX_REASON_CHARS = 500;

/**
 * The failure in the caller's language; a `generation_failed` also quotes why (CONTRACT §11: "with the
 * provider's reason in the message"), as the provider or the run said it, scrubbed of key shapes.
 */
function failureMessage(code: TaskFailureCode, reason: string | null, lang: Lang): string {
  const message = translate(code, lang);
  if (code !== 'generation_failed' || !reason) return message;
  const quoted = scrubSecrets(reason.trim());
  if (quoted === '') return message;
  const cut = quoted.length > MAX_REASON_CHARS ? `${quoted.slice(0, MAX_REASON_CHARS)}…` : quoted;
  return `${message} (${cut})`;
}
