import test from 'ava';
import { dropTestDatabase, type TestService } from '../helpers/service.ts';
import { SAMPLE_PREFIXES, startSampleService } from '../helpers/sample.ts';

const API_KEY = 'partner-key-5b2f0c9e';
const REJECTED = { error: 'a valid x-api-key header is required' };

let service: TestService;

test.before(async () => {
  service = await startSampleService(undefined, { sample: { apiKey: API_KEY } });
  await service.runtime.knex('tenants').insert({ name: 'acme' });
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

function status(target: TestService, prefix: string, headers: Record<string, string>): Promise<Response> {
  return target.fetch(`${prefix}/partner/status`, { headers });
}

for (const prefix of SAMPLE_PREFIXES) {
  test(`${prefix}/partner/status with the right key answers the tenant and the time`, async (t) => {
    const before = Date.now();
    const response = await status(service, prefix, { 'x-api-key': API_KEY });
    t.is(response.status, 200);
    const body = (await response.json()) as { success: boolean; data: { tenant: string; time: string } };
    t.deepEqual(Object.keys(body.data).sort(), ['tenant', 'time']);
    t.is(body.success, true);
    t.is(body.data.tenant, 'default');
    t.regex(body.data.time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const time = Date.parse(body.data.time);
    t.true(time >= before - 1000 && time <= Date.now() + 1000);
  });

  test(`${prefix}/partner/status names the request's tenant`, async (t) => {
    const response = await status(service, prefix, { 'x-api-key': API_KEY, tenant: 'acme' });
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
      const response = await status(service, prefix, headers);
      t.is(response.status, 401);
      t.regex(response.headers.get('content-type') ?? '', /^application\/json/);
      t.deepEqual(await response.json(), REJECTED);
    });
  }

  test(`${prefix}/partner/status does not take a system JWT instead of the key`, async (t) => {
    const response = await status(service, prefix, { authorization: 'Bearer a.b.c' });
    t.is(response.status, 401);
    t.deepEqual(await response.json(), REJECTED);
  });
}

test('/partner/status rejects everyone when no key is configured', async (t) => {
  const keyless = await startSampleService(t);
  for (const key of ['', 'undefined', API_KEY]) {
    const response = await status(keyless, '/api/sample', key === '' ? {} : { 'x-api-key': key });
    t.is(response.status, 401);
    t.deepEqual(await response.json(), REJECTED);
  }
});

test('/partner/status takes its key from SAMPLE_API_KEY when the expert file names none', async (t) => {
  const fromEnvironment = await startSampleService(t, {}, { SAMPLE_API_KEY: 'key-from-environment' });
  t.is((await status(fromEnvironment, '/api/project', { 'x-api-key': 'key-from-environment' })).status, 200);
  t.is((await status(fromEnvironment, '/api/project', { 'x-api-key': API_KEY })).status, 401);
});

test('the API key never reaches the log', async (t) => {
  await status(service, '/api/sample', { 'x-api-key': API_KEY });
  await status(service, '/api/sample', { 'x-api-key': 'wrong-key' });
  t.false(service.logText().includes(API_KEY));
});
