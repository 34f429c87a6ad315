import test from 'ava';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';

// SPEC §17: pg keeps every row of an answer in memory until the last has come, in the heap every
// tenant's requests share. Before, `find({}).toArray()` of a large collection brought in whatever
// its statement's time allowed (146 MB in 1.5 s, measured); now a statement's rows are bounded
// (`limits.resultBytes`), and one that comes to more is stopped with an error naming the limit.

test.after.always(dropTestDatabase);

const RESULT_BYTES = 64 * 1024;

const ROUTES = `
import { db } from 'spaceport';
const outcome = (promise) => promise.then((documents) => ({ count: documents.length }), (error) => ({ name: error.name, message: error.message }));
export default [
  { method: 'POST', path: '/fill', skipAuth: true, function: async (req, res) => {
    const text = 'x'.repeat(1000);
    await db.collection('big').insertMany(Array.from({ length: 200 }, (_, n) => ({ n, text })));
    res.json({ filled: true });
  } },
  { method: 'GET', path: '/all', skipAuth: true, function: async (req, res) => res.json(await outcome(db.collection('big').find({}).toArray())) },
  { method: 'GET', path: '/some', skipAuth: true, function: async (req, res) => res.json(await outcome(db.collection('big').find({}).limit(20).toArray())) },
  { method: 'GET', path: '/all-in-a-transaction', skipAuth: true, function: async (req, res) => res.json(await outcome(db.transaction((tx) => tx.collection('big').find({}).toArray()))) },
  { method: 'POST', path: '/fill-wide', skipAuth: true, function: async (req, res) => {
    await db.collection('wide').insertOne({ text: 'w'.repeat(100000) });
    res.json({ filled: true });
  } },
  { method: 'GET', path: '/wide', skipAuth: true, function: async (req, res) => res.json(await outcome(db.collection('wide').find({}).toArray())) },
  { method: 'GET', path: '/all-unhandled', skipAuth: true, function: async (req, res) => res.json(await db.collection('big').find({}).toArray()) },
];
`;

let service: ServiceUnderTest;

test.before(async () => {
  await migrateFileDatabase();
  service = await startWithProjects(undefined, writeTree({ 'shelf/api/routes.js': ROUTES }), { expert: { limits: { resultBytes: RESULT_BYTES } } });
  const filled = await service.fetch('/api/shelf/fill', { method: 'POST' });
  if (filled.status !== 200) throw new Error(`fill: ${filled.status} ${await filled.text()}`);
});

test.after.always(async () => {
  await service?.close();
});

const get = async (path: string) => json(await service.fetch(`/api/shelf${path}`));

const TOO_LARGE = {
  name: 'ResultTooLarge',
  message: `a database statement's rows came to more than ${RESULT_BYTES} bytes (limits.resultBytes), and it was stopped: read fewer at a time (limit() with a range or skip(), or a projection)`,
};

test.serial("a find whose rows come to more than limits.resultBytes is stopped with an error naming the limit; the pool goes on serving", async (t) => {
  t.deepEqual(await get('/all'), TOO_LARGE, '200 documents of 1 KB against a bound of 64 KiB');
  t.deepEqual(await get('/some'), { count: 20 }, 'a page of the same collection, under the bound');
  t.deepEqual(await get('/all-in-a-transaction'), TOO_LARGE);
  for (let round = 0; round < 12; round++) t.deepEqual(await get('/some'), { count: 20 }, `round ${round}: every connection of the pool still serves`);
});

test.serial('left unhandled, it is a 500 whose log line names the error', async (t) => {
  const response = await service.fetch('/api/shelf/all-unhandled');
  t.is(response.status, 500);
  t.false((await response.text()).includes('limits.resultBytes'), 'a 5xx shows no error text');
  t.regex(service.logText(), /ResultTooLarge/);
});

test.serial('rows that pass the bound in the read that ends the statement fail the same: one document of 100 KB against 64 KiB', async (t) => {
  t.is((await service.fetch('/api/shelf/fill-wide', { method: 'POST' })).status, 200);
  // Its last bytes come with the statement's end, parsed in one go after the connection was cut.
  for (let round = 0; round < 3; round++) t.deepEqual(await get('/wide'), TOO_LARGE, `round ${round}`);
  t.deepEqual(await get('/some'), { count: 20 }, 'the pool still serves');
});
