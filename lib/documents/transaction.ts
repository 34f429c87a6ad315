import { AsyncLocalStorage } from 'node:async_hooks';
import { TransactionGivenUp, type TransactionStatement } from '../db/tenant-database.ts';
import type { Statement } from '../db/statement.ts';
import { Collection, type StoreDatabase, type StoreScope } from './collection.ts';
import { DocumentQueryError } from './errors.ts';

export interface TransactionStore {
  collection(name: string): Collection;
}

interface OpenTransaction {
  ended: boolean;
  /** The first statement that failed: PostgreSQL refuses every later one, and the transaction can only roll back. */
  failure: unknown;
}

const currentTransaction = new AsyncLocalStorage<OpenTransaction>();

const GIVEN_UP_CHECK_MS = 100;

/** `db.transaction` does not nest, and `db.collection` inside would run on another connection, waiting for the rows the transaction locked. */
export function refuseInsideTransaction(what: string): void {
  const open = currentTransaction.getStore();
  if (open !== undefined && !open.ended) throw new DocumentQueryError(`${what} inside db.transaction: use the tx it gives (tx.collection(name)); transactions do not nest`);
}

/**
 * Commits when the handler resolves; rolls back when it throws, when a statement inside failed (even if caught), or
 * at once when the request is answered meanwhile (the handler's time limit): `tx` is then an error.
 */
export async function runTransaction<Result>(scope: StoreScope, handler: (tx: TransactionStore) => Promise<Result>): Promise<Result> {
  refuseInsideTransaction('db.transaction');
  if (typeof handler !== 'function') throw new TypeError('db.transaction needs a function: db.transaction(async (tx) => { ... })');
  const open: OpenTransaction = { ended: false, failure: undefined };
  const { database, tenant, stillWanted, declaredPaths, documentShapes } = scope;
  let watch: NodeJS.Timeout | undefined;
  const givenUp = new Promise<never>((_, reject) => {
    watch = setInterval(() => {
      if (!stillWanted()) reject(new TransactionGivenUp());
    }, GIVEN_UP_CHECK_MS);
  });
  // Raced only once the connection is taken: until then (and after), a rejection is not an unhandled one.
  givenUp.catch(() => undefined);
  try {
    return await database.transaction(
      tenant,
      async (run) => {
        const inTransaction: StoreScope = { database: transactionDatabase(open, tenant, run), tenant, stillWanted, declaredPaths, documentShapes, inTransaction: true };
        const tx: TransactionStore = Object.freeze({ collection: (name: string) => new Collection(name, () => inTransaction) });
        const result = await Promise.race([currentTransaction.run(open, () => handler(tx)), givenUp]);
        if (open.failure !== undefined) throw new DocumentQueryError(`the transaction rolled back: a statement inside it failed (${(open.failure as Error).message})`);
        return result;
      },
      stillWanted,
    );
  } finally {
    open.ended = true;
    clearInterval(watch);
  }
}

function transactionDatabase(open: OpenTransaction, tenant: string, run: TransactionStatement): StoreDatabase {
  const query = async (statementTenant: string, statement: Statement) => {
    if (open.ended) throw new DocumentQueryError('this transaction has ended: use tx only inside its handler, and await every call before the handler returns');
    if (open.failure !== undefined) throw new DocumentQueryError(`an earlier statement of this transaction failed, so it will roll back: ${(open.failure as Error).message}`);
    if (statementTenant !== tenant) throw new Error('a transaction runs for one tenant');
    try {
      return await run(statement);
    } catch (error) {
      open.failure ??= error;
      throw error;
    }
  };
  return {
    query: query as StoreDatabase['query'],
    // A write of several statements (a large insertMany) is part of this transaction already.
    transaction: ((statementTenant: string, work: (run: TransactionStatement) => Promise<unknown>) => work((statement) => query(statementTenant, statement))) as StoreDatabase['transaction'],
  };
}
