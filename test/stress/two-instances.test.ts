import { randomBytes } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { createKnex } from '../../lib/db/connect.ts';
import { withTenantDatabase } from '../helpers/database.ts';
import { migrateLatest } from '../../lib/db/migrations.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { hmacToken, systemClaims } from '../helpers/forged-tokens.ts';
import { haproxyBinary, startBalancer, type Balancer } from '../helpers/haproxy.ts';
import { REDIS_URL, testWithRedis } from '../helpers/redis.ts';
import { dropTestDatabase, TEST_JWT_SECRET, testDatabaseUrl } from '../helpers/service.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { describeExchange, steadyLoad, stopUnderLoad, type PlannedRequest } from '../helpers/steady-load.ts';

/**
 * Two services on one PostgreSQL and one Redis behind a real HAProxy (SPEC §8.6, §2.5, §4.1):
 * one public rate-limit budget, a tenant created anywhere served everywhere at once, and an
 * instance stopped with SIGTERM under load without a single request lost at the balancer.
 */

const PUBLIC_BUDGET = 20;
const EXIT_LIMIT_MS = 10_000;

// Decided before any test is declared: ava takes declarations only until the file first waits.
const withRedis = await testWithRedis();
const haproxy = await haproxyBinary();
if ('missing' in haproxy && !process.env.CI) process.stderr.write(`${haproxy.missing}: the two-instance tests are skipped\n`);
const twoInstances = 'path' in haproxy || process.env.CI ? withRedis : test.serial.skip;

interface Deployment {
  one: ServiceProcess;
  two: ServiceProcess;
  balancer: Balancer;
  databaseUrl: string;
  /** A system JWT of the admin `alice` in the default tenant. */
  token: string;
}

test.before(async () => {
  const knex = createKnex(await testDatabaseUrl());
  await migrateLatest(knex);
  await knex.destroy();
});

test.after.always(dropTestDatabase);

async function deploy(t: ExecutionContext): Promise<Deployment> {
  if ('missing' in haproxy) throw new Error(haproxy.missing);
  const databaseUrl = await testDatabaseUrl();
  const options = {
    databaseUrl,
    redisUrl: REDIS_URL,
    expert: { spaces: { enabled: true }, http: { trustProxy: true }, rateLimit: { public: { windowMs: 60_000, max: PUBLIC_BUDGET } } },
  };
  const [one, two] = await Promise.all([startServiceProcess(t, options), startServiceProcess(t, options)]);
  const balancer = await startBalancer(t, haproxy.path, { one: one.port, two: two.port });
  const { account } = await withTenantDatabase(databaseUrl, (database) => saveAccount(database, 'default', { username: 'alice', password: 'alice-password-1', role: 'admin' }));
  return { one, two, balancer, databaseUrl, token: hmacToken({ alg: 'HS256', typ: 'JWT' }, systemClaims(account.uid, 'default'), TEST_JWT_SECRET) };
}

/** A tenant of this run only, so that Redis counters of earlier runs do not count. */
function freshTenant(): string {
  return `two${randomBytes(5).toString('hex')}`;
}

function heartbeat(origin: string, tenant: string): Promise<Response> {
  return fetch(`${origin}/api/sample/heartbeat`, { headers: { tenant } });
}

twoInstances('the public rate-limit budget is shared exactly: across both instances, the N+1th request gets 429', async (t) => {
  const { one, two, balancer, databaseUrl } = await deploy(t);
  const knex = createKnex(databaseUrl);
  t.teardown(() => knex.destroy());
  const [alternating, concurrent] = [freshTenant(), freshTenant()];
  await createTenant(knex, alternating);
  await createTenant(knex, concurrent);

  const remaining: string[] = [];
  for (let index = 0; index < PUBLIC_BUDGET; index++) {
    const response = await heartbeat(index % 2 === 0 ? one.url : two.url, alternating);
    t.is(response.status, 200, `request ${index + 1}`);
    remaining.push(response.headers.get('ratelimit-remaining') ?? '');
  }
  t.deepEqual(remaining, Array.from({ length: PUBLIC_BUDGET }, (_, index) => String(PUBLIC_BUDGET - 1 - index)), 'RateLimit-Remaining counts down across both');
  for (const service of [one, two]) {
    const limited = await heartbeat(service.url, alternating);
    t.is(limited.status, 429, 'the N+1th request, on either instance');
    t.true(Number(limited.headers.get('retry-after')) > 0);
  }

  const answers = await Promise.all(Array.from({ length: 3 * PUBLIC_BUDGET }, () => heartbeat(balancer.url, concurrent)));
  const served = answers.filter((response) => response.status === 200);
  t.is(served.length, PUBLIC_BUDGET, `of ${answers.length} requests at once through the balancer, exactly the budget passed`);
  t.is(answers.filter((response) => response.status === 429).length, 2 * PUBLIC_BUDGET);
  t.deepEqual(servers(answers.map((response) => response.headers.get('x-served-by'))), ['one', 'two'], 'both instances answered');
});

twoInstances('a tenant created while both run is served by the other instance at once', async (t) => {
  const { one, two, balancer, databaseUrl } = await deploy(t);
  const knex = createKnex(databaseUrl);
  t.teardown(() => knex.destroy());
  const tenant = freshTenant();
  for (const service of [one, two]) {
    const unknown = await heartbeat(service.url, tenant);
    t.is(unknown.status, 400, 'asked for just before it exists');
    t.deepEqual(await unknown.json(), { error: 'unknown tenant' });
  }
  await createTenant(knex, tenant);
  const answers = [await heartbeat(two.url, tenant), await heartbeat(one.url, tenant), await heartbeat(balancer.url, tenant)];
  t.deepEqual(answers.map((response) => response.status), [200, 200, 200], 'the first request after the tenant was created is served, on either instance');
});

twoInstances('stopping one instance with SIGTERM under load loses no request at the balancer', async (t) => {
  const { one, two, balancer, token } = await deploy(t);
  const paths = ['/healthz', '/spaces', '/openapi.json', '/spaces/nowhere', 'create'];
  const authorization = `Bearer ${token}`;
  const load = steadyLoad({
    workers: 40,
    paceMs: 5,
    next: (worker, sequence): PlannedRequest => {
      const pathname = paths[(worker + sequence) % paths.length] ?? '/healthz';
      if (pathname !== 'create') return { label: `GET ${pathname}`, url: `${balancer.url}${pathname}`, init: { headers: { authorization } } };
      // A write with a name of its own: a retry of a request that was in fact carried out would answer 409.
      const body = JSON.stringify({ name: `space-${worker}-${sequence}` });
      return { label: 'POST /spaces', url: `${balancer.url}/spaces`, init: { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body } };
    },
  });
  const { exchanges, signalled, exit, exitMs } = await stopUnderLoad(load, one, 2000, 1500);

  const expected = (label: string) => ({ 'GET /spaces/nowhere': 404, 'POST /spaces': 201 })[label] ?? 200;
  const failed = exchanges.filter((exchange) => exchange.status !== expected(exchange.label));
  const servedBy = (from: number, to: number) => servers(exchanges.filter((exchange) => exchange.startedAt >= from && exchange.endedAt < to).map((exchange) => exchange.headers?.get('x-served-by')));
  t.log(`${exchanges.length} requests through the balancer; instance one exited ${exit.code ?? exit.signal} ${Math.round(exitMs)} ms after SIGTERM`);
  t.deepEqual(failed.slice(0, 10).map((exchange) => describeExchange(exchange, signalled)), [], `${failed.length} requests failed at the balancer`);
  t.deepEqual(servedBy(0, signalled), ['one', 'two'], 'both served before the signal');
  t.deepEqual(servedBy(signalled + exitMs, Number.POSITIVE_INFINITY), ['two'], 'the other one serves everything after');
  t.is(exit.code, 0);
  t.true(exitMs < EXIT_LIMIT_MS, `exited ${Math.round(exitMs)} ms after SIGTERM`);
  t.true(two.running());
});

/** The distinct `X-Served-By` names, sorted. */
function servers(names: ReadonlyArray<string | null | undefined>): string[] {
  return [...new Set(names)].map(String).sort();
}
