import { requestScope } from '../tenancy/scope.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
import { Collection, type StoreScope } from './collection.ts';

export { Collection, type FindOneOptions, type StoreScope } from './collection.ts';
export { FindCursor } from './cursor.ts';
export { DocumentQueryError, DuplicateKeyError } from './errors.ts';
export type * from './types.ts';

/** Collections of one tenant's documents (SPEC §9). */
export interface DocumentStore {
  collection(name: string): Collection;
}

/** The store of an explicitly named tenant: for the CLI, start-up code and tests. */
export function documentStore(database: TenantDatabase, tenant: string): DocumentStore {
  if (typeof tenant !== 'string' || tenant.length === 0) throw new TypeError('documentStore needs a tenant');
  const scope: StoreScope = Object.freeze({ database, tenant, stillWanted: () => true });
  return Object.freeze({ collection: (name: string) => new Collection(name, () => scope) });
}

/** The scope of the request being served; the error outside one says what to use instead. */
function currentRequestScope(): StoreScope {
  return requestScope('db', ' (outside requests, use documentStore(database, tenant))');
}

/**
 * The facility route handlers import: each operation runs against the tenant of the request
 * being served (SPEC §4.2), and fails outside one.
 */
export const db: DocumentStore = Object.freeze({ collection: (name: string) => new Collection(name, currentRequestScope) });
