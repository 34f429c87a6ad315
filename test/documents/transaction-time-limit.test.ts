import test from 'ava';
import type { Knex } from 'knex';
import { dropTestDatabase, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { testKnex } from '../helpers/database.ts';

// A transaction is bounded by the handler's time limit: once the request is answered 504, the
// transaction rolls back and frees its connection, though the handler is still awaiting.

test.after.always(dropTestDatabase);

const HANDLER_MS = 1000;
const HANDLER_SLEEPS_MS = 5000;

const ROUTES = `
import { db } from 'spaceport';
let lateUse = 'not yet';
export default [
  { method: 'POST', path: '/slow', skipAuth: true, function: async (req, res) => {
    await db.transaction(async (tx) => {
      await tx.collection('slow').insertOne({ _id: 'first' });
      await new Promise((resolve) => setTimeout(resolve, ${HANDLER_SLEEPS_MS}));
      lateUse = await tx.collection('slow').insertOne({ _id: 'late' }).then(() => 'written', (error) => error.message);
    }).catch(() => undefined);
    res.json({ done: true });
  } },
  { method: 'GET', path: '/late-use', skipAuth: true, function: (req, res) => res.json({ lateUse }) },
  { method: 'POST', path: '/quick', skipAuth: true, function: async (req, res) => {
    res.json(await db.transaction(async (tx) => {
      await tx.collection('quick').insertOne({ _id: 'a' });
      return tx.collection('quick').countDocuments();
    }));
  } },
];
`;

let service: ServiceUnderTest;
let owner: Knex;

test.before(async () => {
  await migrateFileDatabase();
  owner = testKnex(await testDatabaseUrl());
  service = await startWithProjects(undefined, writeTree({ 'desk/api/routes.js': ROUTES }), { expert: { limits: { handlerMs: HANDLER_MS } } });
});

test.after.always(async () => {
  await service?.close();
  await owner?.destroy();
});

async function rowsOf(collection: string): Promise<number> {
  const [{ count }] = await owner('documents').where({ collection }).count({ count: '*' });
  return Number(count);
}

async function transactionsOpen(): Promise<number> {
  const { rows } = await owner.raw<{ rows: unknown[] }>("select 1 from pg_stat_activity where datname = current_database() and state like 'idle in transaction%' and pid <> pg_backend_pid()");
  return rows.length;
}

test.serial('a transaction in a request commits with the handler', async (t) => {
  const response = await service.fetch('/api/desk/quick', { method: 'POST' });
  t.is(response.status, 200);
  t.is(await response.json(), 1);
  t.is(await rowsOf('quick'), 1);
});

test.serial('past the handler’s time limit the transaction rolls back and frees its connection at once; tx is then refused', async (t) => {
  const started = Date.now();
  const response = await service.fetch('/api/desk/slow', { method: 'POST' });
  t.is(response.status, 504);
  const deadline = started + HANDLER_SLEEPS_MS - 500;
  while (Date.now() < deadline && (await transactionsOpen()) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  t.true(Date.now() < started + HANDLER_SLEEPS_MS, 'checked while the handler still sleeps');
  t.is(await transactionsOpen(), 0, 'no connection is left idle in the transaction while the handler sleeps');
  t.is(await rowsOf('slow'), 0, 'the write made before the 504 was rolled back');
  await new Promise((resolve) => setTimeout(resolve, HANDLER_SLEEPS_MS - (Date.now() - started) + 500));
  t.deepEqual(await json(await service.fetch('/api/desk/late-use')), { lateUse: 'this transaction has ended: use tx only inside its handler, and await every call before the handler returns' });
  t.is(await rowsOf('slow'), 0);
});
