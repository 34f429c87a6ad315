import test from 'ava';
import path from 'node:path';
import { start } from '../../lib/testing/index.ts';
import { writeTree } from '../helpers/projects.ts';

// Issue 37, point 11: in spaceport/testing, a test's concurrent requests of one tenant wait for
// its share of the connections as long as a busy machine needs (limits.queueMs 30 s), unless the
// test sets the queue itself, as a test of the share does; and a statement may wait 10 s for its
// answer, not the service's 1.5 s.
const HOLD_MS = 2500;
const ROUTES = `import { db } from 'spaceport';
export default [
  { method: 'POST', path: '/hold', skipAuth: true, function: async (req, res) => {
    await db.transaction(async (tx) => {
      await tx.collection('held').insertOne({ at: 1 });
      await new Promise((resolve) => setTimeout(resolve, ${HOLD_MS}));
    });
    res.json({ held: true });
  } },
  { method: 'GET', path: '/count', skipAuth: true, function: async (req, res) => res.json({ count: await db.collection('held').countDocuments({}) }) },
  { method: 'POST', path: '/lock', skipAuth: true, function: async (req, res) => {
    await db.transaction(async (tx) => {
      await tx.collection('rows').updateOne({ _id: 'r' }, { $inc: { n: 1 } }, { upsert: true });
      await new Promise((resolve) => setTimeout(resolve, ${HOLD_MS}));
    });
    res.json({ locked: true });
  } },
  { method: 'POST', path: '/bump', skipAuth: true, function: async (req, res) => {
    res.json(await db.collection('rows').updateOne({ _id: 'r' }, { $inc: { n: 1 } }, { upsert: true }));
  } },
];`;
const PROJECT = path.join(writeTree({ 'queue/api/routes.js': ROUTES }), 'queue');

async function countWhileHeld(limits: Record<string, number>): Promise<number> {
  const app = await start({ project: PROJECT, expert: { limits } });
  try {
    const holding = app.post('/api/queue/hold', { json: {} });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const counted = await app.get('/api/queue/count');
    await holding;
    return counted.status;
  } finally {
    await app.close();
  }
}

test(`a statement over the tenant's share waits for it longer than the service's 2 s`, async (t) => {
  t.is(await countWhileHeld({ tenantConnections: 1 }), 200);
});

test('a test that sets limits.queueMs gets its own queue', async (t) => {
  t.is(await countWhileHeld({ tenantConnections: 1, queueMs: 200 }), 503);
});

test("a statement waits for its answer longer than the service's 1.5 s", async (t) => {
  const app = await start({ project: PROJECT });
  t.teardown(() => app.close());
  await app.post('/api/queue/bump', { json: {} });
  const locking = app.post('/api/queue/lock', { json: {} });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const bumped = await app.post('/api/queue/bump', { json: {} });
  t.is((await locking).status, 200);
  t.is(bumped.status, 200, 'it waited for the row the transaction held');
});
