/**
 * What a migration uses to stay bounded (README, For DBAs): `withLockRetries` for DDL outside the
 * transaction the runner gives each migration, `createIndexConcurrently` for an index on a table
 * that holds rows, `inBatches` for a pass over every row, and `Waivers` to break a rule of the
 * safety check, with the reason.
 */
export { inBatches, type BatchJob } from './batches.ts';
export { createIndexConcurrently, dropIndexConcurrently } from './concurrent-index.ts';
export { withLockRetries } from './lock-retries.ts';
export type { Waivers } from './migration-files.ts';
