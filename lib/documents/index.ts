import { currentRequest } from '../core/request-state.ts';
import { requestScope } from '../tenancy/scope.ts';
import type { DeclaredIndexPaths } from './declared-index-paths.ts';
import type { TenantDatabase } from '../db/tenant-database.ts';
import { Collection, type StoreScope } from './collection.ts';
import { DocumentShapes } from './statements.ts';
import { refuseInsideTransaction, runTransaction, type TransactionStore } from './transaction.ts';

export { Collection, type FindOneOptions, type StoreScope } from './collection.ts';
export { FindCursor } from './cursor.ts';
export type { FindPlan } from './plan.ts';
export { DocumentQueryError, DuplicateKeyError, UnguardedWriteError } from './errors.ts';
export type * from './types.ts';
export type { TransactionStore } from './transaction.ts';
/** For the account store, which keeps accounts as documents of this table (lib/auth/accounts.ts). */
export { DOCUMENTS } from './statements.ts';
export { newDocumentId } from './ids.ts';
export { toStorableValue } from './values.ts';

/** Collections of one tenant's documents (SPEC §9). */
export interface DocumentStore {
  collection(name: string): Collection;
  /**
   * Runs `handler` in one transaction: `tx.collection(name)` has the same API, and everything
   * done through it commits together when the handler resolves, or not at all when it throws
   * (the error is rethrown). Resolves to what the handler resolves to.
   */
  transaction<Result>(handler: (tx: TransactionStore) => Promise<Result>): Promise<Result>;
}

/** The store of an explicitly named tenant: for the CLI, start-up code and tests (`declaredPaths`: `runtime.declaredPaths`). */
export function documentStore(database: TenantDatabase, tenant: string, declaredPaths?: DeclaredIndexPaths): DocumentStore {
  if (typeof tenant !== 'string' || tenant.length === 0) throw new TypeError('documentStore needs a tenant');
  const documentShapes = currentRequest()?.runtime?.documentShapes ?? new DocumentShapes();
  const scope: StoreScope = Object.freeze({ database, tenant, stillWanted: () => true, documentShapes, ...(declaredPaths === undefined ? {} : { declaredPaths }) });
  return storeOver(() => scope);
}

function currentRequestScope(): StoreScope {
  return requestScope('db', " (use it in a route's handler or auth: code run as the route file loads, or by a timer, has no request and so no tenant)");
}

function storeOver(resolveScope: () => StoreScope): DocumentStore {
  const outsideTransaction = () => {
    refuseInsideTransaction('db.collection');
    return resolveScope();
  };
  return Object.freeze({
    collection: (name: string) => new Collection(name, outsideTransaction),
    transaction: async <Result>(handler: (tx: TransactionStore) => Promise<Result>) => runTransaction(resolveScope(), handler),
  });
}

/**
 * The facility route handlers import: each operation runs against the tenant of the request
 * being served (SPEC §4.2), and fails outside one.
 */
export const db: DocumentStore = storeOver(currentRequestScope);
