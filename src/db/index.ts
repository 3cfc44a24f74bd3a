export { createDb, type Db, migrateToLatest } from './connect.ts';
export type { DialectCapabilities, Tx } from './dialect.ts';
export { isNulInText, isUniqueViolation, UniqueViolation } from './errors.ts';
export type * from './schema.ts';
