import test from 'ava';
import { start, type TestService } from 'spaceport/testing';

const API_KEY = 'partner-key-5b2f0c9e';
const REJECTED = { error: 'a valid x-api-key header is required' };
const PREFIXES = ['/api/sample', '/api/project'] as const;

let app: TestService;

test.before(async () => {
  app = await start({ project: 'sample', settings: { apiKey: API_KEY } });
  await app.createTenant('acme');
});
test.after.always(() => app?.close());

function status(target: TestService, prefix: string, headers: Record<string, string>, tenant?: string): Promise<Response> {
  return target.get(`${prefix}/partner/status`, { headers, tenant });
}

for (const prefix of PREFIXES) {
  test(`${prefix}/partner/status with the right key answers the tenant and the time`, async (t) => {
    const before = Date.now();
    const response = await status(app, prefix, { 'x-api-key': API_KEY });
    t.is(response.status, 200);
    const body = (await response.json()) as { success: boolean; data: { tenant: string; time: string } };
    t.deepEqual(Object.keys(body.data).sort(), ['tenant', 'time']);
    t.is(body.success, true);
    t.is(body.data.tenant, app.tenant);
    t.regex(body.data.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const time = Date.parse(body.data.time);
    t.true(time >= before - 1000 && time <= Date.now() + 1000);
  });

  test(`${prefix}/partner/status names the request's tenant`, async (t) => {
    const response = await status(app, prefix, { 'x-api-key': API_KEY }, 'acme');
    t.is(response.status, 200);
    t.like(await response.json(), { success: true, data: { tenant: 'acme' } });
  });

  for (const [label, headers] of [
    ['a wrong key', { 'x-api-key': 'partner-key-5b2f0c9f' }],
    ['a key that is a prefix of the right one', { 'x-api-key': API_KEY.slice(0, -1) }],
    ['a longer key', { 'x-api-key': `${API_KEY}0` }],
    ['no key', {}],
    ['the key in another header', { authorization: `Bearer ${API_KEY}` }],
  ] as const) {
    test(`${prefix}/partner/status with ${label} is 401`, async (t) => {
      const response = await status(app, prefix, headers);
      t.is(response.status, 401);
      t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
      t.deepEqual(await response.json(), REJECTED);
    });
  }

  test(`${prefix}/partner/status does not take a system JWT instead of the key`, async (t) => {
    const response = await app.get(`${prefix}/partner/status`, { as: app.user });
    t.is(response.status, 401);
    t.deepEqual(await response.json(), REJECTED);
  });
}

test('/partner/status rejects everyone when no key is configured', async (t) => {
  const keyless = await start({ project: 'sample' });
  t.teardown(() => keyless.close());
  t.is(keyless.settings.apiKey, undefined);
  for (const key of ['', 'undefined', API_KEY]) {
    const response = await status(keyless, '/api/sample', key === '' ? {} : { 'x-api-key': key });
    t.is(response.status, 401);
    t.deepEqual(await response.json(), REJECTED);
  }
});

test('/partner/status takes its key from SAMPLE_API_KEY, which wins over the expert file', async (t) => {
  const fromEnvironment = await start({ project: 'sample', settings: { apiKey: API_KEY }, env: { SAMPLE_API_KEY: 'key-from-environment' } });
  t.teardown(() => fromEnvironment.close());
  t.is((await status(fromEnvironment, '/api/project', { 'x-api-key': 'key-from-environment' })).status, 200);
  t.is((await status(fromEnvironment, '/api/project', { 'x-api-key': API_KEY })).status, 401);
});

test('the API key never reaches the log', async (t) => {
  await status(app, '/api/sample', { 'x-api-key': API_KEY });
  await status(app, '/api/sample', { 'x-api-key': 'wrong-key' });
  t.false(app.logText().includes(API_KEY));
});
