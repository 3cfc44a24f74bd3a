/**
 * What the operator console needs from the service (CONTRACT §13): the admin service, the people
 * module's operator functions, the channel router and the ledger's reader, wired in src/app.ts.
 */
import type { EntryPage, PageOptions } from '../../ledger/index.ts';
import type { KeyRequest } from '../pages/keys.ts';
import type { TopupRow } from '../pages/topups-table.ts';
import type { WebIssuedKey, WebKey } from '../people-port.ts';

/** An account as the operator sees it. */
export interface ConsoleAccount {
  id: string;
  name: string;
  balance_minor: number;
  held_minor: number;
  available_minor: number;
  created_at: string;
  email: string | null;
  email_confirmed: boolean | null;
}

/** A model with the operator's switches. */
export interface ConsoleModel {
  key: string;
  name: string;
  kind: string;
  available: boolean;
  max_active: number;
}

/** A channel of real generators and its state (the channel router's view). */
export interface ConsoleChannel {
  name: string;
  provider: string;
  models: string[];
  enabled: boolean;
  /** The circuit: closed, open or half-open. */
  state: string;
  in_flight: number;
  max_concurrency: number;
  succeeded: number;
  failed: number;
  last_error: string | null;
}

/** Everything the console's pages call. */
export interface ConsolePort {
  /** Accounts by a part of the name or e-mail, newest first; the newest without a query. */
  findAccounts(query: { q?: string }): Promise<ConsoleAccount[]>;
  /** One account; 404 not_found when unknown. */
  account(id: string): Promise<ConsoleAccount>;
  /** Credits once per reference (`created` false for a repeat). */
  credit(accountId: string, amountMinor: number, reference: string): Promise<{ created: boolean }>;
  keys(accountId: string): Promise<WebKey[]>;
  /** A key of the account, shown once: 409 too_many_keys past 10 active keys, 404 model_not_found. */
  issueKey(accountId: string, request: KeyRequest): Promise<WebIssuedKey>;
  revokeKey(keyId: string): Promise<void>;
  attachEmail(accountId: string, email: string): Promise<unknown>;
  ledger(accountId: string, options: PageOptions): Promise<EntryPage>;
  models(): Promise<ConsoleModel[]>;
  updateModel(key: string, patch: { available?: boolean; maxActive?: number | null }): Promise<unknown>;
  channels(): Promise<ConsoleChannel[]>;
  /** Top-ups of every account or of one, of a status, newest first (the payments module's list). */
  topups(query: {
    accountId?: string;
    status?: TopupRow['status'];
    cursor?: string;
  }): Promise<{ topups: TopupRow[]; next_cursor: string | null }>;
  /**
   * The account's credited top-ups of these payment ids (its ledger page's references), as payment id →
   * top-up id, in one query (the payments module's `ofPayments`).
   */
  topupsOfPayments(accountId: string, paymentIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
  setChannelEnabled(name: string, enabled: boolean): Promise<unknown>;
}
