import test from 'ava';
import { dropTestDatabase, testDatabaseUrl } from '../helpers/service.ts';
import { createAccount, postJson, startSampleService } from '../helpers/sample.ts';
import { databaseProxy } from '../helpers/database-proxy.ts';

test.after.always(dropTestDatabase);

test('a project handler whose database goes away answers 503 within 2 s, not 500', async (t) => {
  const proxy = await databaseProxy(await testDatabaseUrl());
  t.teardown(() => proxy.close());
  const service = await startSampleService(t, {}, { DATABASE_URL: proxy.url });
  await createAccount(service, 'default', { username: 'alice', password: 'alice-password-1' });
  const before = await postJson(service, '/api/sample/getOneAccount', { EMPLOYEE_ID: 'alice' });
  t.is(before.status, 200, 'the tenant is known and cached before the database goes');

  await proxy.close();
  const started = Date.now();
  const after = await postJson(service, '/api/sample/getOneAccount', { EMPLOYEE_ID: 'alice' });
  t.is(after.status, 503);
  t.deepEqual(await after.json(), { error: 'database unavailable' });
  t.true(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
  t.truthy(service.logs().find((line) => line.msg === 'database unreachable'), 'logged as the database, not as a handler bug');
});
