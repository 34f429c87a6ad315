import test from 'ava';
import { randomBytes } from 'node:crypto';
import { createTenant } from '../../lib/tenancy/index.ts';
import { REDIS_URL, testWithRedis } from '../helpers/redis.ts';
import { dropTestDatabase } from '../helpers/service.ts';
import { fixtureProjects, startWithProjects } from '../helpers/projects.ts';

// Decided before any test is declared: ava takes declarations only until the file first waits.
const withRedis = await testWithRedis();

test.after.always(dropTestDatabase);

withRedis('with REDIS_URL, two instances share one public-route budget per client and tenant', async (t) => {
  const options = { env: { REDIS_URL }, expert: { rateLimit: { public: { windowMs: 60_000, max: 3 } } } };
  const first = await startWithProjects(t, fixtureProjects('chain'), options);
  const second = await startWithProjects(t, fixtureProjects('chain'), options);
  // A tenant made for this run keeps the budget apart from earlier runs against the same Redis.
  const [tenant, otherTenant] = [`redis${randomBytes(5).toString('hex')}`, `redis${randomBytes(5).toString('hex')}`];
  await createTenant(first.runtime.knex, tenant);
  await createTenant(first.runtime.knex, otherTenant);
  const call = (service: typeof first, name = tenant) => service.fetch('/api/guarded/public', { method: 'POST', headers: { tenant: name } });

  const answers = [await call(first), await call(second), await call(first)];
  t.deepEqual(answers.map((response) => response.status), [200, 200, 200]);
  t.deepEqual(answers.map((response) => response.headers.get('ratelimit-remaining')), ['2', '1', '0']);
  for (const service of [second, first]) {
    const limited = await call(service);
    t.is(limited.status, 429);
    t.true(Number(limited.headers.get('retry-after')) > 0);
  }
  t.is((await call(second, otherTenant)).status, 200, 'the budget is per tenant');
});
