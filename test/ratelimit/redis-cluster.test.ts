import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { createTenant } from '../../lib/tenancy/index.ts';
import { fixtureProjects, startWithProjects } from '../helpers/projects.ts';
import { startRedisCluster } from '../helpers/redis-cluster.ts';
import { dropTestDatabase } from '../helpers/service.ts';

test.after.always(dropTestDatabase);

test.serial('with REDIS_CLUSTER_NODES naming one node of a cluster, two instances share each budget exactly, whichever node serves its key', async (t) => {
  const cluster = await threeMasters(t);
  if (cluster === undefined) return;
  // One seed only: the keys of the other two masters' slots are reached by following MOVED.
  const options = { env: { REDIS_CLUSTER_NODES: cluster.seeds[0] ?? '' }, expert: { rateLimit: { public: { windowMs: 60_000, max: 3 } } } };
  const first = await startWithProjects(t, fixtureProjects('chain'), options);
  const second = await startWithProjects(t, fixtureProjects('chain'), options);
  const tenants = Array.from({ length: 6 }, () => `cluster${randomBytes(5).toString('hex')}`);
  for (const tenant of tenants) await createTenant(first.runtime.knex, tenant);
  const call = (service: typeof first, tenant: string) => service.fetch('/api/guarded/public', { method: 'POST', headers: { tenant } });

  for (const tenant of tenants) {
    const answers = [await call(first, tenant), await call(second, tenant), await call(first, tenant)];
    t.deepEqual(answers.map((response) => [response.status, response.headers.get('ratelimit-remaining')]), [[200, '2'], [200, '1'], [200, '0']], tenant);
    t.deepEqual([(await call(second, tenant)).status, (await call(first, tenant)).status], [429, 429], tenant);
  }
  const keys = tenants.map((tenant) => `spaceport:ratelimit:public:60000:${tenant}|127.0.0.1`);
  const masters = new Set(await Promise.all(keys.map(async (key) => (await cluster.masterOf(key)).port)));
  t.true(masters.size >= 2, 'the budgets live on more than one master');
  const reader = new Cluster([{ host: '127.0.0.1', port: Number(new URL(cluster.seeds[0] ?? '').port) }]);
  t.teardown(() => reader.disconnect());
  t.deepEqual(await Promise.all(keys.map((key) => reader.get(key))), keys.map(() => '5'), 'every count, the refused ones too, is in the cluster');
});

test.serial('a Redis Cluster refusing the service\'s password is logged once, with why, and the password never', async (t) => {
  const cluster = await threeMasters(t);
  if (cluster === undefined) return;
  const seed = new URL(cluster.seeds[0] ?? '');
  seed.username = 'spaceport-nobody';
  seed.password = 'not-the-password';
  const options = { env: { REDIS_CLUSTER_NODES: seed.href }, expert: { rateLimit: { public: { windowMs: 60_000, max: 1_000_000 } } } };
  const service = await startWithProjects(t, fixtureProjects('chain'), options);
  const started = Date.now();
  while (Date.now() - started < 3000) {
    t.is((await service.fetch('/api/guarded/public', { method: 'POST' })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const lines = service.logs().filter((line) => /^redis/.test(String(line.msg)));
  const described = lines.map((line) => `${String(line.msg)}: ${String(line.error)}`).join('; ');
  for (const message of new Set(lines.map((line) => String(line.msg)))) {
    t.is(lines.filter((line) => line.msg === message).length, 1, `${described} (${message})`);
  }
  t.true(lines.some((line) => /WRONGPASS/.test(String(line.error))), `the reason is given: ${described}`);
  t.false(service.logText().includes('not-the-password'), 'the password is never logged');
});

/** A cluster of three masters, or undefined where none can be had here: skipped outside CI, failed under it. */
async function threeMasters(t: ExecutionContext) {
  const cluster = await startRedisCluster(t, { masters: 3 });
  if (!('missing' in cluster)) return cluster;
  if (process.env.CI) t.fail(cluster.missing);
  else {
    t.log(`skipped: ${cluster.missing}`);
    t.pass();
  }
  return undefined;
}
