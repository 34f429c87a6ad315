import test from 'ava';
import type { Knex } from 'knex';
import { dropTestDatabase, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { testKnex } from '../helpers/database.ts';
import { boundUnderLoad } from '../helpers/machine-load.ts';

// SPEC §7: a statement over the time limit answers 503, and the limit ends the work in
// PostgreSQL too: the statement is cancelled there, and a write answered 503 changed nothing.

// Serial: each test locks the documents table the other reads.
test.after.always(dropTestDatabase);

const ROUTES = `
import { db } from 'spaceport';
export default [
  { method: 'POST', path: '/insert', skipAuth: true, function: async (req, res) => {
    const documents = Array.from({ length: req.body.count }, (_, index) => ({ n: index }));
    res.json(await db.collection(req.body.collection).insertMany(documents));
  } },
  { method: 'POST', path: '/insert-large', skipAuth: true, function: async (req, res) => {
    const documents = Array.from({ length: req.body.count }, (_, index) => ({ n: index, pad: 'p'.repeat(1000) }));
    res.json(await db.collection(req.body.collection).insertMany(documents));
  } },
  { method: 'POST', path: '/count', skipAuth: true, function: async (req, res) => {
    res.json({ count: await db.collection(req.body.collection).countDocuments({}) });
  } },
];
`;

let service: ServiceUnderTest;
let owner: Knex;

test.before(async () => {
  await migrateFileDatabase();
  owner = testKnex(await testDatabaseUrl());
  service = await startWithProjects(undefined, writeTree({ 'timed/api/routes.js': ROUTES }));
});

test.after.always(async () => {
  await service?.close();
  await owner?.destroy();
});

function post(pathname: string, body: unknown, to: ServiceUnderTest = service): Promise<Response> {
  return to.fetch(`/api/timed${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Holds an exclusive lock on the documents table (every statement on it waits) until released. */
async function lockDocuments(): Promise<() => Promise<void>> {
  const transaction = await owner.transaction();
  await transaction.raw('lock table documents in access exclusive mode');
  return async () => {
    await transaction.rollback();
  };
}

/** The service's statements on `documents` still running or waiting in PostgreSQL. */
async function statementsStillRunning(marker: string): Promise<string[]> {
  const { rows } = await owner.raw<{ rows: Array<{ query: string }> }>(
    "select query from pg_stat_activity where datname = current_database() and state <> 'idle' and query like ? and pid <> pg_backend_pid()",
    [`%${marker}%`],
  );
  return rows.map((row) => row.query);
}

test.serial('a write over the time limit answers 503, is cancelled in PostgreSQL, and changed nothing', async (t) => {
  const release = await lockDocuments();
  let released = false;
  t.teardown(async () => {
    if (!released) await release();
  });
  const started = Date.now();
  const bound = boundUnderLoad(2500);
  const response = await post('/insert', { collection: 'late-writes', count: 500 });
  t.is(response.status, 503);
  t.deepEqual(await json(response), { error: 'database statement cancelled at its time limit' });
  t.true(Date.now() - started < bound, `answered after ${Date.now() - started} ms (bound ${bound} ms at this load)`);
  // PostgreSQL's own timer cancels the statement; give a loaded machine a moment to get there.
  await waitUntil(async () => (await statementsStillRunning('insert into')).length === 0, 2000);
  t.deepEqual(await statementsStillRunning('insert into'), [], 'the insert no longer waits in PostgreSQL');
  await release();
  released = true;
  await new Promise((resolve) => setTimeout(resolve, 300));
  const [{ count }] = await owner('documents').where({ collection: 'late-writes' }).count({ count: '*' });
  t.is(Number(count), 0, 'the write answered 503 left no row behind');
});

test.serial('a bulk insert whose request was answered 504 meanwhile is rolled back, never committed behind the 504', async (t) => {
  // A handler limit shorter than the statement limit, and about 3 MB of documents (several
  // batches in one transaction), the first batch waiting on the lock past the 504.
  const hurried = await startWithProjects(t, writeTree({ 'timed/api/routes.js': ROUTES }), { expert: { limits: { handlerMs: 1000 } } });
  const release = await lockDocuments();
  let released = false;
  t.teardown(async () => {
    if (!released) await release();
  });
  const answered = post('/insert-large', { collection: 'after-504', count: 3000 }, hurried);
  // Released well after the 504 (at 1 s): on a busy machine the handler's timer can fire a few
  // hundred milliseconds late, and the insert must still be waiting when it does.
  setTimeout(() => {
    released = true;
    void release();
  }, 2500);
  const response = await answered;
  t.is(response.status, 504);
  await waitUntil(async () => (await statementsStillRunning('insert into')).length === 0, 5000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const [{ count }] = await owner('documents').where({ collection: 'after-504' }).count({ count: '*' });
  t.is(Number(count), 0, 'the documents of a request answered 504 were not written');
  t.truthy(
    hurried.logs().find((line) => line.msg === 'request' && line.status === 504 && line.route === 'POST /insert-large'),
    'the 504 is the request’s answer',
  );
});

test.serial('a read over the time limit answers 503 and no longer occupies a PostgreSQL backend', async (t) => {
  const release = await lockDocuments();
  t.teardown(release);
  const response = await post('/count', { collection: 'late-reads' });
  t.is(response.status, 503);
  await waitUntil(async () => (await statementsStillRunning('count(*)')).length === 0, 2000);
  t.deepEqual(await statementsStillRunning('count(*)'), [], 'the count was cancelled, not left waiting');
});

async function waitUntil(condition: () => Promise<boolean>, withinMs: number): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline && !(await condition())) await new Promise((resolve) => setTimeout(resolve, 50));
}
