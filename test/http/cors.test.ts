import test from 'ava';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { fixtureProjects, startWithProjects } from '../helpers/projects.ts';

const APP = 'https://app.example.com';
const CORS = { origins: [APP, '*.example.org'], credentials: true, maxAge: 600, exposeHeaders: ['X-Request-Id', 'RateLimit-Remaining'] };

const SECRET = { HOOKS_WEBHOOK_SECRET: 'any' };

let withCors: ServiceUnderTest;
let without: ServiceUnderTest;
test.before(async () => {
  withCors = await startWithProjects(undefined, fixtureProjects('routeware'), { expert: { spaces: { enabled: true }, cors: CORS }, env: SECRET });
  without = await startWithProjects(undefined, fixtureProjects('routeware'), { expert: { spaces: { enabled: true } }, env: SECRET });
});
test.after.always(async () => {
  await withCors?.close();
  await without?.close();
  await dropTestDatabase();
});

const preflight = (service: ServiceUnderTest, path: string, origin: string, extra: Record<string, string> = {}) =>
  service.fetch(path, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, authorization', ...extra } });

function corsHeaders(response: Response): Record<string, string> {
  return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
}

test('a preflight from an allowed origin is 204 with the methods the path has, before the tenant step and authentication', async (t) => {
  // An invalid tenant would be 400 and a protected route 401: a preflight carries no credentials.
  const response = await preflight(withCors, '/api/hooks/protected', APP, { tenant: 'not a tenant!' });
  t.is(response.status, 204);
  t.deepEqual(corsHeaders(response), {
    'access-control-allow-origin': APP,
    'access-control-allow-credentials': 'true',
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'content-type, authorization',
    'access-control-max-age': '600',
  });
  t.regex(response.headers.get('vary') ?? '', /Origin/);
  t.is(await response.text(), '');
});

test('the preflight names every method of the path as Allow does, GET with HEAD; through a pattern too', async (t) => {
  const raw = await preflight(withCors, '/api/hooks/raw', 'https://deep.app.example.org');
  t.is(raw.status, 204);
  t.is(raw.headers.get('access-control-allow-origin'), 'https://deep.app.example.org');
  t.is(raw.headers.get('access-control-allow-methods'), 'POST');
  const skips = await preflight(withCors, '/api/hooks/skips', 'http://a.example.org');
  t.is(skips.headers.get('access-control-allow-methods'), 'HEAD, GET');
  t.is(skips.headers.get('access-control-allow-methods'), (await withCors.fetch('/api/hooks/skips', { method: 'DELETE' })).headers.get('allow'));
});

test('a preflight to /spaces is answered the same way', async (t) => {
  const list = await preflight(withCors, '/spaces', APP);
  t.is(list.status, 204);
  t.is(list.headers.get('access-control-allow-methods'), 'HEAD, GET, POST');
  const one = await preflight(withCors, '/spaces/notes', APP);
  t.is(one.headers.get('access-control-allow-methods'), 'HEAD, GET, PUT, DELETE');
});

test('a preflight from another origin gets no CORS headers: 405 as without cors', async (t) => {
  for (const origin of ['https://evil.example.net', 'https://example.org', 'http://app.example.com']) {
    const response = await preflight(withCors, '/api/hooks/ordered', origin);
    t.is(response.status, 405, origin);
    t.deepEqual(corsHeaders(response), {}, origin);
  }
});

test('without cors, a preflight stays 405 with Allow and no CORS headers', async (t) => {
  const response = await preflight(without, '/api/hooks/ordered', APP);
  t.is(response.status, 405);
  t.is(response.headers.get('allow'), 'POST');
  t.deepEqual(corsHeaders(response), {});
  const answer = await without.fetch('/api/hooks/answers', { headers: { origin: APP } });
  t.deepEqual(corsHeaders(answer), {});
});

test('answers to an allowed origin carry Allow-Origin (the origin, never *), credentials, exposed headers and Vary', async (t) => {
  const response = await withCors.fetch('/api/hooks/ordered', { method: 'POST', headers: { origin: APP, 'content-type': 'application/json' }, body: '{}' });
  t.is(response.status, 200);
  t.deepEqual(corsHeaders(response), {
    'access-control-allow-origin': APP,
    'access-control-allow-credentials': 'true',
    'access-control-expose-headers': 'X-Request-Id, RateLimit-Remaining',
  });
  t.regex(response.headers.get('vary') ?? '', /Origin/);
});

test('error answers to an allowed origin carry the CORS headers too, so the page can read them', async (t) => {
  const cases: Array<[string, RequestInit, number]> = [
    ['/api/hooks/protected', { method: 'POST' }, 401],
    ['/spaces', {}, 401],
    ['/api/hooks/fails', {}, 500],
    ['/api/nowhere/at-all', {}, 404],
    ['/api/hooks/answers', { headers: { tenant: 'not a tenant!' } }, 400],
    ['/api/hooks/ordered', { method: 'OPTIONS' }, 405],
  ];
  for (const [path, init, status] of cases) {
    const response = await withCors.fetch(path, { ...init, headers: { ...(init.headers as Record<string, string>), origin: APP } });
    t.is(response.status, status, path);
    t.is(response.headers.get('access-control-allow-origin'), APP, path);
  }
});

test('answers to another origin, or without Origin, carry no CORS header', async (t) => {
  const other = await withCors.fetch('/api/hooks/answers', { headers: { origin: 'https://evil.example.net' } });
  t.is(other.status, 202);
  t.deepEqual(corsHeaders(other), {});
  const none = await withCors.fetch('/api/hooks/answers');
  t.deepEqual(corsHeaders(none), {});
});

test('the system endpoints and login are no CORS area', async (t) => {
  const response = await preflight(withCors, '/auth/login', APP);
  t.is(response.status, 405);
  t.deepEqual(corsHeaders(response), {});
});
