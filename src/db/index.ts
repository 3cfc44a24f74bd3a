export { createDb, type Db, migrateToLatest } from './connect.ts';
export type { DialectCapabilities, Tx } from './dialect.ts';
export { isUniqueViolation, UniqueViolation } from './errors.ts';
export type * from './schema.ts';
