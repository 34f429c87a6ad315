import test from 'ava';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { createTenant } from '../../lib/tenancy/index.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { fixtureProjects, json, startWithProjects, tokenFor } from '../helpers/projects.ts';
import { scratchFolder } from '../helpers/scratch.ts';

// Uploads that reach the disk land in the temporary folder or the data folder, both made under this.
const scratch = scratchFolder('h4-chain');
process.env.TMPDIR = scratch;

const projects = fixtureProjects('chain');
const JSON_TYPE = { 'content-type': 'application/json' };
const GOOD_REFERER = 'https://app.example.com/page';

let plain: ServiceUnderTest;
let guarded: ServiceUnderTest;
test.before(async () => {
  plain = await startWithProjects(undefined, projects);
  guarded = await startWithProjects(undefined, projects, {
    expert: {
      referer: { enabled: true, allow: ['app.example.com', '*.example.org'], allowMissing: false },
      rateLimit: { public: { windowMs: 60_000, max: 3 } },
    },
  });
});
test.after.always(async () => {
  await plain?.close();
  await guarded?.close();
  await dropTestDatabase();
});

/** A tenant of its own, so a test's rate-limit budget is not shared with another test. */
async function freshTenant(service: ServiceUnderTest): Promise<string> {
  const tenant = `t${randomBytes(5).toString('hex')}`;
  await createTenant(service.runtime.knex, tenant);
  return tenant;
}

/** Files only: other tests of this file start services, which make empty folders here. */
function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

test('system auth: no token is 401 with a Bearer challenge, before a malformed body is read', async (t) => {
  const response = await plain.fetch('/api/guarded/system', { method: 'POST', headers: JSON_TYPE, body: '{"broken":' });
  t.is(response.status, 401);
  t.is(response.headers.get('www-authenticate'), 'Bearer');
  t.deepEqual(await response.json(), { error: 'authentication required' });
  const token = await tokenFor(plain);
  const malformed = await plain.fetch('/api/guarded/system', { method: 'POST', headers: { ...JSON_TYPE, authorization: `Bearer ${token}` }, body: '{"broken":' });
  t.is(malformed.status, 400);
  t.is(typeof (await json(malformed)).error, 'string');
});

test('system auth: a valid token reaches the handler with req.uid; another tenant\'s token is 401', async (t) => {
  const token = await tokenFor(plain, 'default', 'uid-42');
  const response = await plain.fetch('/api/guarded/system', { method: 'POST', headers: { ...JSON_TYPE, authorization: `Bearer ${token}` }, body: '{"a":1}' });
  t.is(response.status, 200);
  t.deepEqual(await json(response), { order: ['handler'], bodySeenByAuth: null, body: { a: 1 }, uid: 'uid-42', files: null });
  const tenant = await freshTenant(plain);
  const foreign = await plain.fetch('/api/guarded/system', { method: 'POST', headers: { tenant, authorization: `Bearer ${token}` } });
  t.is(foreign.status, 401);
});

test('req.auth: the verified token\'s claims, frozen, on a system-auth route; none on a public one; what a custom auth sets on its own', async (t) => {
  const token = await tokenFor(plain, 'default', 'uid-42');
  const response = await plain.fetch('/api/guarded/claims', { headers: { authorization: `Bearer ${token}` } });
  t.is(response.status, 200);
  const { auth, frozen } = (await json(response)) as { auth: { iat: unknown; exp: unknown }; frozen: boolean };
  t.like(auth, { uid: 'uid-42', tenant: 'default' });
  t.true(Number.isInteger(auth.iat) && Number.isInteger(auth.exp));
  t.true(frozen);
  t.deepEqual(await json(await plain.fetch('/api/guarded/claims-public', { headers: { authorization: `Bearer ${token}` } })), { auth: null, frozen: null });
  t.deepEqual(await json(await plain.fetch('/api/guarded/claims-custom')), { auth: { apiKey: 'k1' }, frozen: false });
});

test('public: no token needed, and the answer carries the rate-limit headers', async (t) => {
  const tenant = await freshTenant(plain);
  const response = await plain.fetch('/api/guarded/public', { method: 'POST', headers: { ...JSON_TYPE, tenant }, body: '{"p":true}' });
  t.is(response.status, 200);
  t.like(await json(response), { order: ['handler'], body: { p: true }, uid: null });
  t.is(response.headers.get('ratelimit-limit'), '600');
  t.is(response.headers.get('ratelimit-remaining'), '599');
});

test('custom auth: JSON, urlencoded and text bodies are parsed just before it runs', async (t) => {
  const key = { 'x-api-key': 'open-sesame' };
  const jsonBody = await plain.fetch('/api/guarded/custom', { method: 'POST', headers: { ...JSON_TYPE, ...key }, body: '{"n":1}' });
  t.deepEqual(await json(jsonBody), { order: ['auth', 'handler'], bodySeenByAuth: { n: 1 }, body: { n: 1 }, uid: null, files: null });
  const form = await plain.fetch('/api/guarded/custom', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...key }, body: 'a=1&b=two' });
  t.like(await json(form), { bodySeenByAuth: { a: '1', b: 'two' } });
  const text = await plain.fetch('/api/guarded/custom', { method: 'POST', headers: { 'content-type': 'text/plain', ...key }, body: 'plain words' });
  t.like(await json(text), { bodySeenByAuth: 'plain words' });
});

test('custom auth answers for itself and replaces the system JWT', async (t) => {
  const token = await tokenFor(plain);
  const wrongKey = await plain.fetch('/api/guarded/custom', { method: 'POST', headers: { ...JSON_TYPE, 'x-api-key': 'guess', authorization: `Bearer ${token}` }, body: '{}' });
  t.is(wrongKey.status, 401);
  t.deepEqual(await wrongKey.json(), { error: 'wrong api key' });
  const malformed = await plain.fetch('/api/guarded/custom', { method: 'POST', headers: { ...JSON_TYPE, 'x-api-key': 'guess' }, body: '{"broken":' });
  t.is(malformed.status, 400, 'the body is parsed before custom auth runs');
});

test('custom auth that throws or calls next(err) is a 500 without the error text', async (t) => {
  for (const url of ['/api/guarded/custom-throws', '/api/guarded/custom-next-error']) {
    const response = await plain.fetch(url);
    t.is(response.status, 500, url);
    t.deepEqual(await response.json(), { success: false, message: 'Internal Server Error' }, url);
  }
});

test("custom auth declining with next('route') never runs the route's handler", async (t) => {
  const declined = await plain.fetch('/api/guarded/declined');
  t.is(declined.status, 404);
  t.deepEqual(await declined.json(), { error: 'Not Found' });
  const admitted = await plain.fetch('/api/guarded/declined', { headers: { 'x-api-key': 'open-sesame' } });
  t.like(await json(admitted), { order: ['handler'] });
  const next = await plain.fetch('/api/guarded/declined-everywhere');
  t.deepEqual(await json(next), { reached: 'the next route', what: 'everywhere' }, 'the next route matching the URL answers');
});

test('an unauthenticated multipart request is 401 and writes nothing to disk', async (t) => {
  t.true(plain.runtime.config.dataDir.startsWith(scratch));
  const before = filesUnder(scratch);
  const upload = () => {
    const form = new FormData();
    form.append('file', new Blob([Buffer.alloc(256 * 1024, 7)]), 'big.bin');
    return form;
  };
  const anonymous = await plain.fetch('/api/guarded/system', { method: 'POST', body: upload() });
  t.is(anonymous.status, 401);
  t.deepEqual(filesUnder(scratch), before);
  const wrongKey = await plain.fetch('/api/guarded/custom', { method: 'POST', headers: { 'x-api-key': 'guess' }, body: upload() });
  t.is(wrongKey.status, 401);
  t.deepEqual(filesUnder(scratch), before);

  const token = await tokenFor(plain);
  const signedIn = await plain.fetch('/api/guarded/system', { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: upload() });
  t.is(signedIn.status, 200);
  t.like(await json(signedIn), { files: { file: 256 * 1024 } });
});

test('referer validation is off by default: any Referer passes', async (t) => {
  const response = await plain.fetch('/api/guarded/public', { method: 'POST', headers: { referer: 'https://evil.test/' } });
  t.is(response.status, 200);
});

test('the tenant step runs first: an unknown tenant is 400 whatever else is wrong', async (t) => {
  const response = await guarded.fetch('/api/guarded/system', { method: 'POST', headers: { tenant: 'nosuchtenant', referer: 'https://evil.test/' } });
  t.is(response.status, 400);
  t.deepEqual(await response.json(), { error: 'unknown tenant' });
});

test('referer validation: allowed hosts and subdomains pass, others and missing headers are 403', async (t) => {
  const token = await tokenFor(guarded);
  const call = (headers: Record<string, string>) => guarded.fetch('/api/guarded/system', { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers } });
  t.is((await call({ referer: GOOD_REFERER })).status, 200);
  t.is((await call({ referer: 'http://a.b.example.org:8080/x' })).status, 200);
  t.is((await call({ origin: 'https://shop.example.org' })).status, 200);
  const refused: Array<Record<string, string>> = [{ referer: 'https://example.org/' }, { referer: 'https://app.example.com.evil.test/' }, { referer: 'not a url' }, { origin: 'null' }, { referer: GOOD_REFERER, origin: 'https://evil.test' }];
  for (const headers of refused) {
    const response = await call(headers);
    t.is(response.status, 403, JSON.stringify(headers));
    t.deepEqual(await response.json(), { error: 'referer not allowed' });
  }
  const missing = await call({});
  t.is(missing.status, 403);
  t.deepEqual(await missing.json(), { error: 'a Referer or Origin header is required' });
});

test('referer runs before authentication and body parsing', async (t) => {
  const noToken = await guarded.fetch('/api/guarded/system', { method: 'POST', headers: { ...JSON_TYPE, referer: 'https://evil.test/' }, body: '{"broken":' });
  t.is(noToken.status, 403);
  const custom = await guarded.fetch('/api/guarded/custom', { method: 'POST', headers: { ...JSON_TYPE, referer: 'https://evil.test/' }, body: '{"broken":' });
  t.is(custom.status, 403);
});

test('referer runs before the rate limit: refused requests spend none of the budget', async (t) => {
  const tenant = await freshTenant(guarded);
  const call = (referer: string) => guarded.fetch('/api/guarded/public', { method: 'POST', headers: { tenant, referer } });
  for (let attempt = 0; attempt < 4; attempt += 1) {
    const refused = await call('https://evil.test/');
    t.is(refused.status, 403);
    t.is(refused.headers.get('ratelimit-limit'), null);
  }
  for (const remaining of ['2', '1', '0']) {
    const response = await call(GOOD_REFERER);
    t.is(response.status, 200);
    t.is(response.headers.get('ratelimit-limit'), '3');
    t.is(response.headers.get('ratelimit-remaining'), remaining);
  }
  const limited = await call(GOOD_REFERER);
  t.is(limited.status, 429);
  t.true(Number(limited.headers.get('retry-after')) > 0);
  t.is(limited.headers.get('ratelimit-remaining'), '0');
  t.is(typeof (await json(limited)).error, 'string');
});

test('the rate limit runs before custom auth on a public route, and only public routes are limited', async (t) => {
  const tenant = await freshTenant(guarded);
  const headers = { tenant, referer: GOOD_REFERER };
  for (let attempt = 0; attempt < 3; attempt += 1) {
    t.is((await guarded.fetch('/api/guarded/public-custom', { method: 'POST', headers: { ...headers, 'x-api-key': 'guess' } })).status, 401);
  }
  const limited = await guarded.fetch('/api/guarded/public-custom', { method: 'POST', headers: { ...headers, 'x-api-key': 'open-sesame' } });
  t.is(limited.status, 429, 'the refused attempts counted, so the right key comes too late');
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const custom = await guarded.fetch('/api/guarded/custom', { method: 'POST', headers: { ...headers, 'x-api-key': 'open-sesame' } });
    t.is(custom.status, 200);
    t.is(custom.headers.get('ratelimit-limit'), null);
  }
});

test('referer with allowMissing (the default): no Referer or Origin passes, a wrong one does not', async (t) => {
  const lenient = await startWithProjects(t, projects, { expert: { referer: { enabled: true, allow: ['app.example.com'] } } });
  t.is((await lenient.fetch('/api/guarded/public', { method: 'POST' })).status, 200);
  t.is((await lenient.fetch('/api/guarded/public', { method: 'POST', headers: { referer: 'https://evil.test/' } })).status, 403);
  t.is((await lenient.fetch('/api/guarded/public', { method: 'POST', headers: { referer: 'https://APP.example.com/' } })).status, 200);
});
