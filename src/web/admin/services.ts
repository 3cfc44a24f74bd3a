/**
 * The console's port over the service's own operators' services: the admin service (accounts, credits,
 * keys, models), the people module (search, e-mail), the channel router and the ledger's reader.
 */
import type { EntryPage, PageOptions } from '../../ledger/index.ts';
import type { TopupRow } from '../pages/topups-table.ts';
import type { WebIssuedKey, WebKey } from '../people-port.ts';
import type { ConsoleAccount, ConsoleChannel, ConsoleModel, ConsolePort } from './port.ts';

/** The parts of the services the console calls. */
export interface ConsoleServices {
  admin: {
    getAccount(id: string): Promise<Omit<ConsoleAccount, 'email' | 'email_confirmed'>>;
    credit(accountId: string, amountMinor: number, reference: string): Promise<{ created: boolean }>;
    /** An account's keys, newest first. */
    keys(accountId: string): Promise<WebKey[]>;
    issueKey(
      accountId: string,
      input: { name: string | null; models: string[] | null; dailyLimitMinor: number | null },
    ): Promise<WebIssuedKey>;
    revokeKey(keyId: string): Promise<void>;
    updateModel(key: string, patch: { available?: boolean; maxActive?: number | null }): Promise<unknown>;
  };
  people: {
    findAccounts(query: { q?: string }): Promise<ConsoleAccount[]>;
    attachEmail(accountId: string, email: string): Promise<unknown>;
    personOfAccount(accountId: string): Promise<{ email: string; emailConfirmed: boolean } | null>;
  };
  models: { list(allowed: readonly string[] | null): Promise<ConsoleModel[]> };
  channels: {
    views(): Promise<ConsoleChannel[]>;
    setEnabled(name: string, enabled: boolean): Promise<unknown>;
  };
  ledger: { page(accountId: string, options?: PageOptions): Promise<EntryPage> };
  topups: {
    adminList(query: {
      account_id?: string;
      status?: TopupRow['status'];
      cursor?: string;
    }): Promise<{ topups: Array<TopupRow & { account_id: string }>; next_cursor: string | null }>;
    ofPayments(accountId: string, paymentIds: readonly string[]): Promise<ReadonlyMap<string, string>>;
  };
}

/** The console's port over the services. */
export function consolePort(services: ConsoleServices): ConsolePort {
  return {
    findAccounts: (query) => services.people.findAccounts(query),
    async account(id) {
      const account = await services.admin.getAccount(id);
      const person = await services.people.personOfAccount(id);
      return {
        ...account,
        email: person?.email ?? null,
        email_confirmed: person ? person.emailConfirmed : null,
      };
    },
    credit: (accountId, amountMinor, reference) => services.admin.credit(accountId, amountMinor, reference),
    keys: (accountId) => services.admin.keys(accountId),
    issueKey: (accountId, request) => services.admin.issueKey(accountId, request),
    revokeKey: (keyId) => services.admin.revokeKey(keyId),
    attachEmail: (accountId, email) => services.people.attachEmail(accountId, email),
    ledger: (accountId, options) => services.ledger.page(accountId, options),
    async models() {
      return (await services.models.list(null)).map(({ key, name, kind, available, max_active }) => ({
        key,
        name,
        kind,
        available,
        max_active,
      }));
    },
    updateModel: (key, patch) => services.admin.updateModel(key, patch),
    channels: () => services.channels.views(),
    topups: (query) =>
      services.topups.adminList({
        ...(query.accountId ? { account_id: query.accountId } : {}),
        ...(query.status ? { status: query.status } : {}),
        ...(query.cursor ? { cursor: query.cursor } : {}),
      }),
    topupsOfPayments: (accountId, paymentIds) => services.topups.ofPayments(accountId, paymentIds),
    setChannelEnabled: (name, enabled) => services.channels.setEnabled(name, enabled),
  };
}
