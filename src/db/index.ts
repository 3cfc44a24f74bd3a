export { type BatchHandle, type BatchKind, batched, MAX_BATCH } from './batches.ts';
export { createDb, type Db, migrateToLatest } from './connect.ts';
export { counterStore } from './counters.ts';
export {
  type DialectCapabilities,
  idsJson,
  type JsonColumns,
  type JsonRowOf,
  notifyOnCommit,
  rowsJson,
  type Tx,
} from './dialect.ts';
export { bumpEpoch, type EpochReader, epochReaderOf, KeptUntilEpoch } from './epochs.ts';
export { isLockTimeout, isNulInText, isUniqueViolation, UniqueViolation } from './errors.ts';
export { insertRow } from './insert-row.ts';
export { type PreparedQuery, type PreparedValues, prepared } from './prepared.ts';
export type * from './schema.ts';
export { recordStatementTimes, type StatementTime } from './statement-times.ts';
