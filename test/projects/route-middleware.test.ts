import test from 'ava';
import { createHmac } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { validateRoutes } from '../../lib/projects/route-file.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { fixtureProjects, json, startWithProjects, tokenFor } from '../helpers/projects.ts';

const JSON_TYPE = { 'content-type': 'application/json' };
const WEBHOOK_SECRET = 'a-webhook-secret-shared-with-the-sender';

let service: ServiceUnderTest;
test.before(async () => {
  service = await startWithProjects(undefined, fixtureProjects('routeware'), { expert: { limits: { jsonBytes: 64 } }, env: { HOOKS_WEBHOOK_SECRET: WEBHOOK_SECRET } });
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = JSON_TYPE) => service.fetch(`/api/hooks${path}`, { method: 'POST', headers, body });

test('middleware runs in order after body parsing, before the handler, with the same req', async (t) => {
  const response = await post('/ordered', '{"n":1}');
  t.is(response.status, 200);
  t.deepEqual(await json(response), {
    trail: [
      { step: 'first', body: { n: 1 } },
      { step: 'second', body: { n: 1 } },
      { step: 'handler', body: { n: 1 } },
    ],
  });
});

test('middleware runs after system authentication: no token is 401, a token reaches it', async (t) => {
  const refused = await post('/protected', '{"n":1}');
  t.is(refused.status, 401);
  const token = await tokenFor(service);
  const allowed = await post('/protected', '{"n":1}', { ...JSON_TYPE, authorization: `Bearer ${token}` });
  t.is(allowed.status, 200);
  t.deepEqual((await json(allowed)).trail, [
    { step: 'first', body: { n: 1 } },
    { step: 'handler', body: { n: 1 } },
  ]);
});

test('middleware runs after a custom auth, which may refuse first', async (t) => {
  t.is((await post('/custom', '{}', { ...JSON_TYPE, 'x-key': 'closed' })).status, 401);
  const allowed = await post('/custom', '{"k":true}', { ...JSON_TYPE, 'x-key': 'open' });
  t.deepEqual((await json(allowed)).trail, [
    { step: 'first', body: { k: true } },
    { step: 'handler', body: { k: true } },
  ]);
});

test('the body schema is checked before middleware runs', async (t) => {
  const invalid = await post('/checked', '{"name":5}');
  t.is(invalid.status, 400);
  const valid = await post('/checked', '{"name":"x"}');
  t.is(valid.status, 299);
  t.deepEqual(await valid.json(), { reached: 'middleware' });
});

test('a middleware that answers ends the chain; next(err) and a throw are 500 as from a handler', async (t) => {
  const answered = await service.fetch('/api/hooks/answers');
  t.is(answered.status, 202);
  t.deepEqual(await answered.json(), { by: 'middleware' });
  for (const url of ['/api/hooks/fails', '/api/hooks/throws']) {
    const failed = await service.fetch(url);
    t.is(failed.status, 500, url);
    t.deepEqual(await failed.json(), { success: false, message: 'Internal Server Error' }, url);
  }
});

test("next('route') from a middleware goes to the next matching route, skipping the handler", async (t) => {
  const response = await service.fetch('/api/hooks/skips');
  t.deepEqual(await response.json(), { by: 'next route', other: null });
});

test('an Express middleware package works as route middleware (helmet)', async (t) => {
  const response = await service.fetch('/api/hooks/helmet');
  t.is(response.status, 200);
  t.is(response.headers.get('x-content-type-options'), 'nosniff');
  t.truthy(response.headers.get('content-security-policy'));
});

test('rawBody: the exact bytes of a JSON, urlencoded or text body, the body parsed as usual', async (t) => {
  const cases: Array<[string, string, unknown]> = [
    ['application/json', '{ "a" :1,\n"é":"\u2603" }', { a: 1, é: '\u2603' }],
    ['application/x-www-form-urlencoded', 'a=1&b=%C3%A9', { a: '1', b: 'é' }],
    ['text/plain; charset=utf-8', 'just words \u00e9', 'just words \u00e9'],
  ];
  for (const [type, text, parsed] of cases) {
    const response = await post('/raw', text, { 'content-type': type });
    t.is(response.status, 200, type);
    t.deepEqual(await json(response), { isBuffer: true, raw: Buffer.from(text).toString('base64'), body: parsed }, type);
  }
});

test('rawBody: the bytes as they arrived, compressed ones too, parsed decompressed', async (t) => {
  const compressed = gzipSync('{"zipped":true}');
  const response = await post('/raw', compressed, { ...JSON_TYPE, 'content-encoding': 'gzip' });
  t.deepEqual(await json(response), { isBuffer: true, raw: compressed.toString('base64'), body: { zipped: true } });
});

test('rawBody: malformed and oversized bodies answer as on any route', async (t) => {
  for (const path of ['/raw', '/not-raw']) {
    const malformed = await post(path, '{"broken":');
    t.is(malformed.status, 400, path);
    t.deepEqual(await malformed.json(), { error: 'malformed JSON body' }, path);
    const oversized = await post(path, JSON.stringify({ long: 'x'.repeat(100) }));
    t.is(oversized.status, 413, path);
    t.deepEqual(await oversized.json(), { error: 'request body too large' }, path);
  }
});

test('rawBody: only the routes declaring it keep the bytes; a custom auth route keeps them too', async (t) => {
  t.deepEqual(await json(await post('/not-raw', '{"a":1}')), { isBuffer: false, raw: null, body: { a: 1 } });
  const custom = await post('/raw-custom', '{"a":1}');
  t.deepEqual(await json(custom), { isBuffer: true, raw: Buffer.from('{"a":1}').toString('base64'), body: { a: 1 } });
});

test('the webhook of the guide: a good X-Hub-Signature-256 is 200, a bad one 401', async (t) => {
  const body = '{"action":"opened","number":7}';
  const signature = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`;
  const good = await post('/webhook', body, { ...JSON_TYPE, 'x-hub-signature-256': signature });
  t.is(good.status, 200);
  t.deepEqual(await good.json(), { received: 'opened' });
  const tampered = await post('/webhook', body.replace('7', '8'), { ...JSON_TYPE, 'x-hub-signature-256': signature });
  t.is(tampered.status, 401);
  const unsigned = await post('/webhook', body);
  t.is(unsigned.status, 401);
});

test('start-up refuses middleware that is not an array of functions, and a non-boolean rawBody', (t) => {
  const ok = () => {};
  const { problems } = validateRoutes('p', 'routes.js', [
    { method: 'GET', path: '/a', function: ok, middleware: ok },
    { method: 'GET', path: '/b', function: ok, middleware: [ok, 'cors', null] },
    { method: 'GET', path: '/c', function: ok, rawBody: 'yes' },
    { method: 'GET', path: '/d', function: ok, middleware: [ok], rawBody: false },
  ]);
  t.deepEqual(
    problems.map((problem) => `#${problem.route?.index} ${problem.reason}`),
    ['#0 middleware must be an array of functions (got function)', '#1 middleware[1] must be a function (got string)', '#1 middleware[2] must be a function (got null)', '#2 rawBody must be a boolean (got string)'],
  );
});
