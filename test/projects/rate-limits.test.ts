import test from 'ava';
import { randomBytes } from 'node:crypto';
import { ProjectLoadError } from '../../lib/projects/index.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { dropTestDatabase } from '../helpers/service.ts';
import { json, migrateFileDatabase, startWithProjects, tokenFor, writeTree } from '../helpers/projects.ts';
import { METRICS_TOKEN, samplesOf, scrape } from '../helpers/metrics.ts';
import { REDIS_URL, testWithRedis } from '../helpers/redis.ts';

// Decided before any test is declared: ava takes declarations only until the file first waits.
const withRedis = await testWithRedis();

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

const ROUTES = `
const answer = (req, res) => res.json({ uid: req.uid ?? null });
export default [
  { method: 'GET', path: '/search', skipAuth: true, rateLimit: { max: 2, windowMs: 60000, by: 'ip' }, function: answer },
  { method: 'GET', path: '/open', skipAuth: true, function: answer },
  { method: 'GET', path: '/also-open', skipAuth: true, function: answer },
  { method: 'POST', path: '/report', rateLimit: { max: 2, windowMs: 60000, by: 'user' }, function: answer },
  { method: 'GET', path: '/mine', function: answer },
  { method: 'GET', path: '/hook', auth: (req, res, next) => (req.get('x-api-key') === 'k' ? next() : res.status(401).json({ error: 'wrong key' })), rateLimit: { max: 1, windowMs: 60000, by: 'user' }, function: answer },
];
`;

const projects = () => writeTree({ 'limited/api/routes.js': ROUTES });
const fromIp = (ip: string, headers: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': ip, ...headers } });
const statuses = (responses: readonly Response[]) => responses.map((response) => response.status);

test('a public route limited by IP has its own budget, with the RateLimit headers and 429 with Retry-After', async (t) => {
  const service = await startWithProjects(t, projects(), { env: { METRICS_TOKEN }, expert: { http: { trustProxy: true } } });
  const search = (ip: string) => service.fetch('/api/limited/search', fromIp(ip));
  const answers = [await search('203.0.113.1'), await search('203.0.113.1'), await search('203.0.113.1')];
  t.deepEqual(statuses(answers), [200, 200, 429]);
  t.deepEqual(answers.map((answer) => answer.headers.get('ratelimit-limit')), ['2', '2', '2']);
  t.deepEqual(answers.map((answer) => answer.headers.get('ratelimit-remaining')), ['1', '0', '0']);
  t.true(Number(answers[2].headers.get('retry-after')) > 0);
  t.deepEqual(await json(answers[2]), { error: 'too many requests' });
  t.is((await search('203.0.113.2')).status, 200, 'another address has its own budget');
  const open = await service.fetch('/api/limited/open', fromIp('203.0.113.1'));
  t.is(open.status, 200, "the route's own budget leaves the shared public one alone");
  t.is(open.headers.get('ratelimit-limit'), '600');
  t.is(open.headers.get('ratelimit-remaining'), '599');
  const rejections = samplesOf(await scrape(service), 'spaceport_rate_limit_rejections_total');
  t.deepEqual(rejections.map((sample) => [sample.labels.limit, sample.value]), [['route', 1]], 'a bounded label, not the URL');
});

test('behind a trusted proxy the client cannot pick its address: the entry the proxy appended to X-Forwarded-For counts', async (t) => {
  const service = await startWithProjects(t, projects(), { expert: { http: { trustProxy: true } } });
  // What an appending proxy (nginx's $proxy_add_x_forwarded_for, AWS ALB) passes on: the
  // client's own header, then the address the proxy saw.
  const answers = [];
  for (const spoofed of ['10.0.0.1', '10.0.0.2', '10.0.0.3']) answers.push(await service.fetch('/api/limited/search', fromIp(`${spoofed}, 203.0.113.7`)));
  t.deepEqual(statuses(answers), [200, 200, 429]);
});

test('routes without their own limit keep sharing the public budget', async (t) => {
  const service = await startWithProjects(t, projects(), { expert: { rateLimit: { public: { windowMs: 60_000, max: 2 } } } });
  t.is((await service.fetch('/api/limited/open')).headers.get('ratelimit-remaining'), '1');
  t.is((await service.fetch('/api/limited/also-open')).headers.get('ratelimit-remaining'), '0');
  t.is((await service.fetch('/api/limited/open')).status, 429);
  t.is((await service.fetch('/api/limited/search')).status, 200, 'a route with its own budget is not counted in the shared one');
  t.is((await service.fetch('/api/limited/mine')).headers.get('ratelimit-limit'), null, 'a JWT route without a limit has none');
});

test('a JWT route limited by user: each user has a budget, shared across addresses; per tenant', async (t) => {
  const service = await startWithProjects(t, projects(), { expert: { http: { trustProxy: true } } });
  const other = `rl${randomBytes(5).toString('hex')}`;
  await createTenant(service.runtime.knex, other);
  const [ann, bob, annElsewhere] = [await tokenFor(service, 'default', 'ann'), await tokenFor(service, 'default', 'bob'), await tokenFor(service, other, 'ann')];
  const report = (token: string, ip: string, tenant = 'default') =>
    service.fetch('/api/limited/report', { method: 'POST', ...fromIp(ip, { authorization: `Bearer ${token}`, tenant }) });
  t.deepEqual(statuses([await report(ann, '203.0.113.1'), await report(ann, '203.0.113.2'), await report(ann, '203.0.113.3')]), [200, 200, 429]);
  const bobs = await report(bob, '203.0.113.1');
  t.is(bobs.status, 200, 'another user has his own budget, from the same address');
  t.is(bobs.headers.get('ratelimit-remaining'), '1');
  t.is((await report(annElsewhere, '203.0.113.1', other)).status, 200, 'the budget is per tenant');
  const anonymous = await service.fetch('/api/limited/report', { method: 'POST' });
  t.is(anonymous.status, 401, 'system authentication answers before the limit counts');
  t.is(anonymous.headers.get('ratelimit-limit'), null);
});

test('on a custom-auth route a limit by user counts by IP, before the route’s auth runs', async (t) => {
  const service = await startWithProjects(t, projects(), { expert: { http: { trustProxy: true } } });
  const hook = (ip: string, key = 'wrong') => service.fetch('/api/limited/hook', fromIp(ip, { 'x-api-key': key }));
  const refused = await hook('203.0.113.1');
  t.is(refused.status, 401);
  t.is(refused.headers.get('ratelimit-remaining'), '0', 'counted before the custom auth answered');
  t.is((await hook('203.0.113.1', 'k')).status, 429, 'the budget is the address’s, whatever key it sends');
  t.is((await hook('203.0.113.2', 'k')).status, 200);
});

const BAD_LIMITS = `
const answer = (req, res) => res.json({});
export default [
  { method: 'GET', path: '/a', rateLimit: { max: 0, windowMs: 1.5, by: 'tenant' }, function: answer },
  { method: 'GET', path: '/b', rateLimit: 10, function: answer },
  { method: 'GET', path: '/c', rateLimit: { max: 1, windowMs: 1000, by: 'ip', maxx: 2 }, function: answer },
  { method: 'GET', path: '/d', skipauth: true, rateLimt: { max: 1, windowMs: 1000, by: 'ip' }, function: answer },
  { method: 'GET', path: '/e', rateLimit: { max: 1, windowMs: 2147483648, by: 'ip' }, function: answer },
  { method: 'GET', path: '/f', rateLimit: { max: 1, windowMs: 2147483647, by: 'ip' }, function: answer },
];
`;

test('a wrong rateLimit, and a property a letter or a case away from a known one, are start-up problems', async (t) => {
  const root = writeTree({ 'bad/api/routes.js': BAD_LIMITS });
  const error = await t.throwsAsync(startWithProjects(t, root), { instanceOf: ProjectLoadError });
  const reasons = (error as ProjectLoadError).problems.map((problem) => problem.reason);
  t.deepEqual(reasons, [
    'rateLimit.max must be a positive integer (got 0)',
    'rateLimit.windowMs must be a whole number of milliseconds from 1 to 2147483647 (got 1.5)',
    'rateLimit.by must be "ip" or "user" (got "tenant")',
    'rateLimit must be an object {max, windowMs, by} (got number)',
    'unknown property "rateLimit.maxx" (did you mean "max"?)',
    'unknown property "skipauth" (did you mean "skipAuth"?)',
    'unknown property "rateLimt" (did you mean "rateLimit"?)',
    'rateLimit.windowMs must be a whole number of milliseconds from 1 to 2147483647 (got 2147483648)',
  ]);
});

test('/openapi.json shows a route’s own limit: 429 with the RateLimit headers', async (t) => {
  const service = await startWithProjects(t, projects());
  const document = await json(await service.fetch('/openapi.json'));
  const paths = document.paths as Record<string, Record<string, Record<string, unknown>>>;
  const report = paths['/api/limited/report'].post;
  const responses = report.responses as Record<string, unknown>;
  t.deepEqual(responses['429'], { $ref: '#/components/responses/TooManyRequests' });
  t.deepEqual(report['x-spaceport-rate-limit'], { max: 2, windowMs: 60000, by: 'user' });
  t.regex(String(report.description), /2 requests per 60 s per caller/);
  t.is((paths['/api/limited/mine'].get.responses as Record<string, unknown>)['429'], undefined);
  const components = document.components as Record<string, Record<string, Record<string, unknown>>>;
  t.deepEqual(Object.keys(components.responses.TooManyRequests.headers as object), ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
});

withRedis('with REDIS_URL, two instances share a route’s own budget by user', async (t) => {
  const root = projects();
  const first = await startWithProjects(t, root, { env: { REDIS_URL } });
  const second = await startWithProjects(t, root, { env: { REDIS_URL } });
  // A tenant made for this run keeps the budget apart from earlier runs against the same Redis.
  const tenant = `redis${randomBytes(5).toString('hex')}`;
  await createTenant(first.runtime.knex, tenant);
  const token = await tokenFor(first, tenant, 'ann');
  const report = (service: typeof first) => service.fetch('/api/limited/report', { method: 'POST', headers: { authorization: `Bearer ${token}`, tenant } });
  const answers = [await report(first), await report(second), await report(first)];
  t.deepEqual(statuses(answers), [200, 200, 429]);
  t.deepEqual(answers.map((answer) => answer.headers.get('ratelimit-remaining')), ['1', '0', '0']);
});
