/** Pages of top-ups (newest first, by id: ids are time-ordered) and the API's view of one. */
import type { Db, TopupsTable } from '../db/index.ts';
import { errors } from '../errors.ts';
import type { TopupStatus, TopupView } from './topup-service.ts';

type Row = TopupsTable;

/** One page of top-ups, filtered; `next` is the cursor of the following page. */
export async function pageOf(
  db: Db,
  query: {
    accountId?: string | undefined;
    status?: TopupStatus | undefined;
    cursor?: string | undefined;
    limit: number;
  },
): Promise<{ rows: Row[]; next: string | null }> {
  let q = db.db.selectFrom('topups').selectAll();
  if (query.accountId !== undefined) q = q.where('account_id', '=', query.accountId);
  if (query.status !== undefined) q = q.where('status', '=', query.status);
  if (query.cursor !== undefined) q = q.where('id', '<', decodeCursor(query.cursor));
  const rows = await q
    .orderBy('id', 'desc')
    .limit(query.limit + 1)
    .execute();
  const last = rows.length > query.limit ? rows[query.limit - 1] : undefined;
  return {
    rows: rows.slice(0, query.limit),
    next: last ? Buffer.from(last.id).toString('base64url') : null,
  };
}
function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^tp_[0-9a-f-]{36}$/.test(id))
    throw errors.invalidRequest({
      en: 'cursor is not one this API gave out',
      ru: 'cursor не выдан этим API',
    });
  return id;
}

/** A stored top-up as the API answers it. */
export function view(row: Row): TopupView {
  return {
    id: row.id,
    status: row.status,
    amount_minor: Number(row.amount_minor),
    currency: 'RUB',
    confirmation_url: row.status === 'pending' ? row.confirmation_url : null,
    return_url: row.return_url,
    cancellation_reason: row.cancellation_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
