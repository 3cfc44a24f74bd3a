export {
  ENTRY_KINDS,
  EntriesReader,
  type EntryFilter,
  type EntryKind,
  type EntryPage,
  type EntryView,
  entriesOf,
  ledgerOf,
  MAX_PAGE,
  type PageOptions,
} from './entries.ts';
export {
  type Balances,
  balancesOf,
  CURRENCY,
  captureMany,
  credit,
  type HoldInput,
  hold,
  type LedgerEntry,
  settle,
  spentToday,
} from './ledger.ts';
export { type SpendByDay, spendByDay, type WalletOverview, WalletReader } from './spend.ts';
