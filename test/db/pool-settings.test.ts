import test from 'ava';
import { databaseProxy } from '../helpers/database-proxy.ts';
import { json, startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, testDatabaseUrl } from '../helpers/service.ts';
import { testKnex } from '../helpers/database.ts';

// SPEC §15.2: DATABASE_URL may name a transaction-mode pooler; migrations and tools, which hold a
// session (the migration lock), use DATABASE_DIRECT_URL; DATABASE_POOL_MAX sizes the pool.

test.after.always(dropTestDatabase);

const ROUTES = `
import { db } from 'spaceport';
export default [
  { method: 'GET', path: '/count', skipAuth: true, function: async (req, res) => {
    res.json({ count: await db.collection('pooled').countDocuments({ slow: { $exists: true } }) });
  } },
];
`;

test.serial('migrations and tools use DATABASE_DIRECT_URL; requests use DATABASE_URL, with at most DATABASE_POOL_MAX connections', async (t) => {
  const direct = await testDatabaseUrl();
  const pooler = await databaseProxy(direct);
  t.teardown(() => pooler.close());
  const service = await startWithProjects(t, writeTree({ 'pooled/api/routes.js': ROUTES }), {
    env: { DATABASE_URL: pooler.url, DATABASE_DIRECT_URL: direct, DATABASE_POOL_MAX: '2' },
    // The eight counts take turns on one connection: on a loaded machine, longer than the default 2 s queue.
    expert: { limits: { queueMs: 30_000 } },
  });
  t.is(pooler.connections().opened, 1, 'start-up migrated over the direct URL: only the pool’s check went through DATABASE_URL');
  // Every count waits on this lock, holding its connection, until it is released.
  const owner = testKnex(direct);
  t.teardown(() => owner.destroy());
  const lock = await owner.transaction();
  await lock.raw('lock table documents in access exclusive mode');
  const answered = Promise.all(Array.from({ length: 8 }, () => service.fetch('/api/pooled/count')));
  await new Promise((resolve) => setTimeout(resolve, 400));
  await lock.rollback();
  const answers = await answered;
  t.deepEqual(
    await Promise.all(answers.map(async (answer) => [answer.status, await json(answer)])),
    Array.from({ length: 8 }, () => [200, { count: 0 }]),
  );
  t.true(pooler.connections().opened <= 2, `the pool opened ${pooler.connections().opened} connections`);
});

test.serial('without DATABASE_DIRECT_URL everything uses DATABASE_URL', async (t) => {
  const pooler = await databaseProxy(await testDatabaseUrl());
  t.teardown(() => pooler.close());
  await startWithProjects(t, writeTree({ 'pooled/api/routes.js': ROUTES }), { env: { DATABASE_URL: pooler.url } });
  t.true(pooler.connections().opened > 1, 'migrations went through DATABASE_URL too');
});
