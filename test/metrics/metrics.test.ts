import anyTest, { type ExecutionContext } from 'ava';
import { createTenant } from '../../lib/tenancy/index.ts';
import { METRICS_TOKEN, samplesOf, scrape, seriesCount, sampleValue, type Exposition } from '../helpers/metrics.ts';
import { REPO_PROJECTS_DIR } from '../helpers/sample.ts';
import { dropTestDatabase, startTestService, type ServiceUnderTest } from '../helpers/service.ts';

// One at a time: each starts a service of its own, and one sends thousands of requests.
const test = anyTest.serial;
anyTest.after.always(dropTestDatabase);

const REQUESTS = 'spaceport_http_request_duration_seconds_count';

/** The sample project's service with metrics on; `public` rate limit as given (out of reach by default). */
async function startMeasured(t: ExecutionContext, publicLimit = 1_000_000): Promise<ServiceUnderTest> {
  const service = await startTestService(t, {
    env: { PROJECTS_DIR: REPO_PROJECTS_DIR, METRICS_TOKEN },
    expert: { projects: { default: 'sample' }, rateLimit: { public: { max: publicLimit } } },
  });
  await createTenant(service.runtime.knex, 'default').catch(() => undefined);
  return service;
}

function countOf(exposition: Exposition, labels: Record<string, string>): number {
  return sampleValue(exposition, REQUESTS, labels);
}

test('without METRICS_TOKEN, /metrics is 404 as an unknown path, and nothing is recorded', async (t) => {
  const service = await startTestService(t);
  const response = await service.fetch('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  t.is(response.status, 404);
  t.deepEqual(await response.json(), { error: 'Not Found' });
  t.is(service.runtime.metrics, undefined);
});

test('/metrics answers the bearer token alone: 401 with WWW-Authenticate to anything else', async (t) => {
  const service = await startMeasured(t);
  const refused = [undefined, 'Bearer wrong-token-of-the-same-size!', `Bearer ${METRICS_TOKEN}x`, `Basic ${METRICS_TOKEN}`, METRICS_TOKEN, 'Bearer '];
  for (const authorization of refused) {
    const response = await service.fetch('/metrics', { headers: authorization === undefined ? {} : { authorization } });
    t.is(response.status, 401, String(authorization));
    t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer/);
    t.deepEqual(await response.json(), { error: 'a valid metrics token is required' });
  }
  const answered = await service.fetch('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  t.is(answered.status, 200);
  t.regex(answered.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  t.false(service.logText().includes(METRICS_TOKEN), 'the token is never logged');
});

test('requests are counted by method, project, declared route and status; unknown paths share one route label', async (t) => {
  const service = await startMeasured(t);
  for (let index = 0; index < 3; index++) t.is((await service.fetch('/api/sample/heartbeat')).status, 200);
  t.is((await service.fetch('/healthz')).status, 200);
  t.is((await service.fetch('/nowhere/1')).status, 404);
  t.is((await service.fetch('/nowhere/2')).status, 404);
  const families = await scrape(service);
  t.is(countOf(families, { method: 'GET', project: 'sample', route: 'GET /heartbeat', status: '200' }), 3);
  t.is(countOf(families, { method: 'GET', route: 'GET /healthz', status: '200' }), 1);
  t.is(countOf(families, { method: 'GET', route: 'none', status: '404' }), 2);
  t.false(samplesOf(families, REQUESTS).some((sample) => Object.values(sample.labels).some((value) => value.includes('nowhere'))));
});

test('pool gauges, statement durations and the process metrics are there', async (t) => {
  const service = await startMeasured(t);
  await service.fetch('/healthz');
  const families = await scrape(service);
  t.true(sampleValue(families, 'spaceport_db_statement_duration_seconds_count') >= 1, 'the health check ran a statement');
  t.true(sampleValue(families, 'spaceport_db_pool_connections') >= 1);
  t.is(samplesOf(families, 'spaceport_db_pool_idle_connections').length, 1);
  t.is(sampleValue(families, 'spaceport_db_pool_waiting_clients'), 0);
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes']) {
    t.notThrows(() => samplesOf(families, name), name);
  }
});

test('rate-limit rejections are counted by the limit\'s name', async (t) => {
  const service = await startMeasured(t, 2);
  const statuses = [];
  for (let index = 0; index < 5; index++) statuses.push((await service.fetch('/api/sample/heartbeat')).status);
  t.deepEqual(statuses, [200, 200, 429, 429, 429]);
  const rejections = samplesOf(await scrape(service), 'spaceport_rate_limit_rejections_total');
  t.deepEqual(rejections.map((sample) => [sample.labels.limit, sample.value]), [['public', 3]]);
});

test('two services in one process keep their metrics apart', async (t) => {
  const [first, second] = [await startMeasured(t), await startMeasured(t)];
  for (let index = 0; index < 4; index++) await first.fetch('/healthz');
  t.is(countOf(await scrape(first), { route: 'GET /healthz' }), 4);
  t.is(countOf(await scrape(second), { route: 'GET /healthz' }), 0);
});

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'MKCOL', 'LOCK', 'UNLOCK', 'SEARCH', 'PURGE', 'REPORT'];

/** `count` requests, each to a URL never sent before, with methods in turn, `parallel` at a time. */
async function distinctRequests(service: ServiceUnderTest, from: number, count: number, parallel = 8): Promise<void> {
  const shapes = [
    (n: number) => `/never-${n}/x`,
    (n: number) => `/api/sample/missing-${n}`,
    (n: number) => `/api/project-${n}/heartbeat`,
    (n: number) => `/api/sample/heartbeat?cache=${n}`,
    (n: number) => `/spaces/space-${n}`,
    (n: number) => `/healthz/${n}`,
    (n: number) => `/%7E${n}/%zz`,
  ];
  let next = from;
  const worker = async () => {
    while (next < from + count) {
      const n = next++;
      const method = METHODS[n % METHODS.length] ?? 'GET';
      const shape = shapes[Math.floor(n / METHODS.length) % shapes.length] ?? shapes[0];
      // A tenant that does not exist on one request in two, the default tenant on the others.
      const response = await service.fetch(shape?.(n) ?? '/', { method, headers: n % 2 === 0 ? {} : { tenant: `tenant-${n}` } });
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

test('whatever URLs and methods clients send, the series stay bounded: thousands more requests add none', async (t) => {
  const service = await startMeasured(t);
  await distinctRequests(service, 0, 500);
  const before = samplesOf(await scrape(service), REQUESTS).length;
  await distinctRequests(service, 500, 2000);
  const families = await scrape(service);
  const after = samplesOf(families, REQUESTS);
  // The scrape itself adds the one series of GET /metrics.
  t.true(after.length <= before + 1, `request series grew from ${before} to ${after.length}`);
  t.true(after.length < 100, `${after.length} request series`);
  t.true(seriesCount(families) < 400, `${seriesCount(families)} series in all`);
  const values = new Set(after.flatMap((sample) => Object.values(sample.labels)));
  t.false([...values].some((value) => /never|missing|space-|project-|tenant-|cache|%|\/\d/.test(value)), [...values].join(', '));
  t.true(values.has('other'), 'unusual methods share one label');
  t.true(values.has('GET /heartbeat') && values.has('none'), 'declared routes and the one label of unknown paths');
});
