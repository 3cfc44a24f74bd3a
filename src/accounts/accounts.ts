import type { Tx } from '../db/index.ts';
import { errors } from '../errors.ts';
import { balancesOf } from '../ledger/index.ts';
import { uuidv7 } from '../lib/index.ts';

export interface AccountView {
  id: string;
  name: string;
  /** Credited minus captured (kopecks). */
  balance_minor: number;
  held_minor: number;
  available_minor: number;
  created_at: string;
}

export async function createAccount(tx: Tx, input: { name: string; at: Date }): Promise<AccountView> {
  const row = {
    id: uuidv7(input.at.getTime()),
    name: input.name,
    credited_minor: 0,
    captured_minor: 0,
    held_minor: 0,
    created_at: input.at.toISOString(),
  };
  await tx.insertInto('accounts').values(row).execute();
  return {
    id: row.id,
    name: row.name,
    balance_minor: 0,
    held_minor: 0,
    available_minor: 0,
    created_at: row.created_at,
  };
}

/** The account with its balances; 404 account_not_found when there is none. */
export async function getAccount(tx: Tx, id: string): Promise<AccountView> {
  const row = await tx
    .selectFrom('accounts')
    .select(['id', 'name', 'created_at'])
    .where('id', '=', id)
    .executeTakeFirst();
  const balances = row ? await balancesOf(tx, id) : null;
  if (!row || !balances) throw errors.accountNotFound(id);
  return {
    id: row.id,
    name: row.name,
    balance_minor: balances.balanceMinor,
    held_minor: balances.heldMinor,
    available_minor: balances.availableMinor,
    created_at: row.created_at,
  };
}
