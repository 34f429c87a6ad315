import test from 'ava';
import { DocumentQueryError, documentStore, type DocumentStore, type TransactionStore } from '../../lib/documents/index.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';
import { dropApplicationTenantConditionForTest } from '../helpers/row-level-security-alone.ts';

// db.transaction: several operations, over several collections, committed together or not at all.

let database: MigratedDatabase;
let acme: DocumentStore;
let globex: DocumentStore;
let counter = 0;

test.before(async () => {
  database = await migratedDatabase(['acme', 'globex']);
  acme = documentStore(database.tenantDatabase, 'acme');
  globex = documentStore(database.tenantDatabase, 'globex');
});
test.after.always(async () => {
  await database?.close();
});

/** Names of collections of their own for one test. */
function names(): { tickets: string; counters: string } {
  counter += 1;
  return { tickets: `tickets-${counter}`, counters: `counters-${counter}` };
}

/** A ticket and its number from a counter: the helpdesk's two writes that belong together. */
async function openTicket(tx: TransactionStore, { tickets, counters }: { tickets: string; counters: string }, title: string): Promise<number> {
  const counted = await tx.collection(counters).findOneAndUpdate({ _id: 'tickets' }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' });
  const number = counted?.n as number;
  await tx.collection(tickets).insertOne({ _id: `T-${number}`, title });
  return number;
}

test('everything done through tx commits together, and the handler’s result is returned', async (t) => {
  const collections = names();
  const number = await acme.transaction((tx) => openTicket(tx, collections, 'printer'));
  t.is(number, 1);
  t.deepEqual(await acme.collection(collections.tickets).find().toArray(), [{ _id: 'T-1', title: 'printer' }]);
  t.deepEqual(await acme.collection(collections.counters).find().toArray(), [{ _id: 'tickets', n: 1 }]);
});

test('a throw rolls everything back and is rethrown as it was', async (t) => {
  const collections = names();
  await acme.collection(collections.counters).insertOne({ _id: 'tickets', n: 7 });
  const thrown = new Error('the printer caught fire');
  const error = await t.throwsAsync(
    acme.transaction(async (tx) => {
      await openTicket(tx, collections, 'printer');
      t.is(await tx.collection(collections.tickets).countDocuments(), 1, 'the transaction sees its own writes');
      throw thrown;
    }),
  );
  t.is(error, thrown);
  t.is(await acme.collection(collections.tickets).countDocuments(), 0);
  t.deepEqual(await acme.collection(collections.counters).find().toArray(), [{ _id: 'tickets', n: 7 }]);
});

test('its writes are seen by nobody else before it commits', async (t) => {
  const collections = names();
  await acme.transaction(async (tx) => {
    await openTicket(tx, collections, 'screen');
    t.is(await acme.collection(collections.tickets).countDocuments().catch(() => -1), -1, 'db.collection is refused inside the handler');
    // Another connection (the owner's, which sees every row) sees nothing yet.
    const [{ count }] = await database.knex('documents').where({ collection: collections.tickets }).count({ count: '*' });
    t.is(Number(count), 0);
  });
  t.is(await acme.collection(collections.tickets).countDocuments(), 1);
});

test('a statement that failed inside rolls the transaction back, even when the handler caught its error', async (t) => {
  const collections = names();
  await acme.collection(collections.tickets).insertOne({ _id: 'T-1', title: 'old' });
  const error = await t.throwsAsync(
    acme.transaction(async (tx) => {
      await tx.collection(collections.counters).insertOne({ _id: 'tickets', n: 1 });
      await tx.collection(collections.tickets).insertOne({ _id: 'T-1', title: 'duplicate' }).catch(() => undefined);
      await t.throwsAsync(tx.collection(collections.counters).countDocuments(), { instanceOf: DocumentQueryError, message: /an earlier statement of this transaction failed/ });
      return 'done';
    }),
    { instanceOf: DocumentQueryError },
  );
  t.regex(error.message, /the transaction rolled back: a statement inside it failed/);
  t.is(await acme.collection(collections.counters).countDocuments(), 0);
});

test('transactions do not nest, and tx cannot be used once its handler has returned', async (t) => {
  const collections = names();
  let kept: TransactionStore | undefined;
  await t.throwsAsync(
    acme.transaction(async () => acme.transaction(async () => 1)),
    { instanceOf: DocumentQueryError, message: /db.transaction inside db.transaction: use the tx it gives/ },
  );
  await acme.transaction(async (tx) => {
    kept = tx;
  });
  await t.throwsAsync((kept as TransactionStore).collection(collections.tickets).insertOne({ a: 1 }), { instanceOf: DocumentQueryError, message: /this transaction has ended/ });
  // After the transaction, its async context no longer refuses db.collection.
  t.is(await acme.collection(collections.tickets).countDocuments(), 0);
  await t.throwsAsync(acme.transaction('not a function' as never), { instanceOf: TypeError });
});

test('a transaction sees its tenant’s documents only, with both walls and with row-level security alone', async (t) => {
  const { tickets } = names();
  await globex.collection(tickets).insertMany([{ _id: 'g1', secret: true }, { _id: 'shared', owner: 'globex' }]);
  await acme.collection(tickets).insertOne({ _id: 'shared', owner: 'acme' });
  const look = () =>
    acme.transaction(async (tx) => {
      const notes = tx.collection(tickets);
      const seen = await notes.find({}).toArray();
      const changed = await notes.updateMany({}, { $set: { touched: true } });
      const upserted = await notes.updateOne({ _id: 'g1' }, { $set: { mine: true } }, { upsert: true });
      await notes.deleteMany({ secret: true });
      return { seen, changed: changed.matchedCount, upserted: upserted.upsertedId };
    });
  t.deepEqual(await look(), { seen: [{ _id: 'shared', owner: 'acme' }], changed: 1, upserted: 'g1' });
  const restore = dropApplicationTenantConditionForTest();
  try {
    await acme.collection(tickets).deleteOne({ _id: 'g1' });
    t.deepEqual(await look(), { seen: [{ _id: 'shared', owner: 'acme', touched: true }], changed: 1, upserted: 'g1' });
  } finally {
    restore();
  }
  t.deepEqual(await globex.collection(tickets).find().sort({ _id: 1 }).toArray(), [{ _id: 'g1', secret: true }, { _id: 'shared', owner: 'globex' }]);
});
