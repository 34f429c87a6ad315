import test from 'ava';
import type { Knex } from 'knex';
import { dropTestDatabase, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { testKnex } from '../helpers/database.ts';

// SPEC §17.1 (issue 33, point 1): a transaction lives no longer than its request. Whatever ends
// the request, the client leaving (499) or the answer sent while the transaction is still open,
// the transaction rolls back and its connection goes back at once, though the handler still
// waits; `db` used after the request ended is refused. Before, both left the connection "idle in
// transaction" for as long as the handler kept it (ten of them: every tenant got 503).

test.after.always(dropTestDatabase);

/** Long enough that "rolled back while the handler still waits" cannot be the handler ending. */
const HOLD_MS = 4000;

const ROUTES = `
import { db } from 'spaceport';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const outcomes = {};
const record = (key, promise) => promise.then(() => 'written', (error) => error.message);
export default [
  { method: 'POST', path: '/hold/:key', skipAuth: true, function: async (req, res) => {
    const key = req.params.key;
    outcomes[key] = await db.transaction(async (tx) => {
      await tx.collection('held').insertOne({ _id: key });
      await sleep(${HOLD_MS});
      outcomes[key + '-late'] = await record(key, tx.collection('held').insertOne({ _id: key + '-late' }));
    }).then(() => 'committed', (error) => error.message);
    res.json({ done: true });
  } },
  { method: 'POST', path: '/answer-first/:key', skipAuth: true, function: async (req, res) => {
    const key = req.params.key;
    outcomes[key] = await db.transaction(async (tx) => {
      await tx.collection('held').insertOne({ _id: key });
      res.json({ answered: true });
      await sleep(${HOLD_MS});
    }).then(() => 'committed', (error) => error.message);
  } },
  { method: 'POST', path: '/after-answer/:key', skipAuth: true, function: (req, res) => {
    const key = req.params.key;
    res.json({ answered: true });
    setTimeout(() => {
      outcomes[key] = 'pending';
      record(key, db.collection('held').insertOne({ _id: key })).then((outcome) => { outcomes[key] = outcome; });
    }, 300);
  } },
  { method: 'POST', path: '/on-events/:key', skipAuth: true, function: (req, res) => {
    const key = req.params.key;
    for (const event of ['finish', 'close']) {
      res.on(event, () => {
        record(key, db.collection('held').insertOne({ _id: key + '-' + event })).then((outcome) => { outcomes[key + '-' + event] = outcome; });
      });
    }
    res.json({ answered: true });
  } },
  { method: 'POST', path: '/uncaught', skipAuth: true, function: async (req, res) => {
    await db.transaction(async (tx) => {
      await tx.collection('held').insertOne({ _id: 'uncaught' });
      await sleep(1500);
    });
    res.json({ done: true });
  } },
  { method: 'POST', path: '/blocked/:key', skipAuth: true, function: async (req, res) => {
    const key = req.params.key;
    outcomes[key] = await db.transaction(async (tx) => {
      await tx.collection('held').insertOne({ _id: key });
      await tx.collection('locked').updateOne({ _id: 'row' }, { $set: { by: key } });
    }).then(() => 'committed', (error) => error.message);
    res.json({ done: true });
  } },
  { method: 'GET', path: '/outcomes', skipAuth: true, function: (req, res) => res.json(outcomes) },
];
`;

let service: ServiceUnderTest;
let owner: Knex;

test.before(async () => {
  await migrateFileDatabase();
  owner = testKnex(await testDatabaseUrl());
  service = await startWithProjects(undefined, writeTree({ 'desk/api/routes.js': ROUTES }));
});

test.after.always(async () => {
  await service?.close();
  await owner?.destroy();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function heldRows(key: string): Promise<number> {
  const [{ count }] = await owner('documents').where({ collection: 'held' }).whereLike('id', `${key}%`).count({ count: '*' });
  return Number(count);
}

async function transactionsOpen(): Promise<number> {
  const { rows } = await owner.raw<{ rows: unknown[] }>("select 1 from pg_stat_activity where datname = current_database() and state like 'idle in transaction%' and pid <> pg_backend_pid()");
  return rows.length;
}

/** Polls until no backend of this database is idle in a transaction; the milliseconds it took from `since`, or undefined. */
async function closedWithin(since: number, untilMs: number): Promise<number | undefined> {
  while (Date.now() < since + untilMs) {
    if ((await transactionsOpen()) === 0) return Date.now() - since;
    await sleep(50);
  }
  return undefined;
}

async function outcomes(): Promise<Record<string, unknown>> {
  return json(await service.fetch('/api/desk/outcomes'));
}

test.serial('a client that leaves (499) while its transaction waits: it rolls back and frees its connection while the handler still waits', async (t) => {
  const controller = new AbortController();
  const request = service.fetch('/api/desk/hold/left', { method: 'POST', signal: controller.signal }).catch(() => 'aborted');
  // The transaction is open once its first row is written (its backend then waits, idle in transaction).
  await t.notThrowsAsync(() => pollUntil(async () => (await transactionsOpen()) > 0));
  const left = Date.now();
  controller.abort();
  t.is(await request, 'aborted');
  const took = await closedWithin(left, HOLD_MS - 1500);
  t.not(took, undefined, 'no backend is left idle in transaction while the handler sleeps');
  t.log(`rolled back ${took} ms after the client left`);
  t.is(await heldRows('left'), 0, 'nothing of it was committed');
  await pollUntil(async () => (await outcomes())['left-late'] !== undefined, HOLD_MS + 5000);
  t.regex(String((await outcomes())['left-late']), /this transaction has ended|request ended/, 'tx used after the request ended is refused');
  t.regex(String((await outcomes()).left), /request ended .* rolled back/);
  t.is(await heldRows('left'), 0);
});

test.serial('a client that leaves while its transaction waits on a lock: the waiting statement is cancelled, and the transaction rolled back within 1 s, not at the statement limit', async (t) => {
  await owner('documents').insert({ tenant: 'default', collection: 'locked', id: 'row', doc: { _id: 'row' } }).onConflict(['tenant', 'collection', 'id']).ignore();
  const locker = await owner.transaction();
  try {
    await locker.raw("select 1 from documents where tenant = 'default' and collection = 'locked' and id = 'row' for update");
    const controller = new AbortController();
    const request = service.fetch('/api/desk/blocked/waiting', { method: 'POST', signal: controller.signal }).catch(() => 'aborted');
    await pollUntil(async () => (await owner.raw<{ rows: unknown[] }>("select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows.length > 0);
    const left = Date.now();
    controller.abort();
    t.is(await request, 'aborted');
    // A backend carries its statement's tag (application_name spaceport/…) until the transaction ends.
    const tagged = async () => (await owner.raw<{ rows: unknown[] }>("select 1 from pg_stat_activity where datname = current_database() and application_name like 'spaceport/%'")).rows.length;
    let took: number | undefined;
    await pollUntil(async () => {
      took = Date.now() - left;
      return (await tagged()) === 0;
    }, 5000).catch(() => (took = undefined));
    t.log(`rolled back ${took} ms after the client left`);
    t.true(took !== undefined && took < 1000, `rolled back ${took} ms after the client left`);
  } finally {
    await locker.rollback();
  }
  t.is(await heldRows('waiting'), 0);
});

test.serial('a handler that lets the rollback of its client leaving fail it: a 499 on the request line, no error logged', async (t) => {
  const controller = new AbortController();
  const request = service.fetch('/api/desk/uncaught', { method: 'POST', signal: controller.signal }).catch(() => 'aborted');
  await pollUntil(async () => (await transactionsOpen()) > 0);
  controller.abort();
  t.is(await request, 'aborted');
  await pollUntil(async () => service.logs().some((line) => line.msg === 'request' && line.route === 'POST /uncaught'));
  await sleep(200);
  const lines = service.logs().filter((line) => line.route === 'POST /uncaught');
  t.like(lines.find((line) => line.msg === 'request'), { status: 499, error: 'client closed the connection early' });
  t.deepEqual(
    lines.filter((line) => line.msg !== 'request').map((line) => line.msg),
    [],
    'the rollback its leaving caused is routine, as a broken connection is',
  );
  t.is(await heldRows('uncaught'), 0);
});

test.serial('a handler that answers first and keeps its transaction open: the transaction rolls back once the answer is sent', async (t) => {
  const started = Date.now();
  const response = await service.fetch('/api/desk/answer-first/early', { method: 'POST' });
  t.is(response.status, 200);
  t.deepEqual(await response.json(), { answered: true });
  const took = await closedWithin(started, HOLD_MS - 1500);
  t.not(took, undefined, 'no backend is left idle in transaction while the handler sleeps');
  t.log(`rolled back ${took} ms after the request was sent`);
  await pollUntil(async () => (await outcomes()).early !== undefined, HOLD_MS + 5000);
  t.regex(String((await outcomes()).early), /request ended .* rolled back/, 'the transaction did not commit after its request ended');
  t.is(await heldRows('early'), 0);
});

test.serial('db used after its request ended is refused with a clear error', async (t) => {
  const response = await service.fetch('/api/desk/after-answer/late', { method: 'POST' });
  t.is(response.status, 200);
  await pollUntil(async () => {
    const outcome = (await outcomes()).late;
    return outcome !== undefined && outcome !== 'pending';
  }, 10_000);
  t.is((await outcomes()).late, 'db is used after its request ended (answered, or its client gone): finish every db call before answering');
  t.is(await heldRows('late'), 0);
});

test.serial("db used in res's 'finish' or 'close' listener is refused as used after its request, not as used outside one", async (t) => {
  const response = await service.fetch('/api/desk/on-events/evented', { method: 'POST' });
  t.is(response.status, 200);
  await pollUntil(async () => {
    const seen = await outcomes();
    return seen['evented-finish'] !== undefined && seen['evented-close'] !== undefined;
  }, 10_000);
  const seen = await outcomes();
  for (const event of ['finish', 'close']) {
    t.is(seen[`evented-${event}`], 'db is used after its request ended (answered, or its client gone): finish every db call before answering', event);
  }
  t.is(await heldRows('evented-finish') + (await heldRows('evented-close')), 0);
});

async function pollUntil(done: () => Promise<boolean>, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not done within ${withinMs} ms`);
    await sleep(50);
  }
}
