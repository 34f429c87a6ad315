import test from 'ava';
import { databaseProxy } from '../helpers/database-proxy.ts';
import { pgbouncerBinary, startPooler } from '../helpers/pgbouncer.ts';
import { createAccount, postJson, startSampleService } from '../helpers/sample.ts';
import { dropTestDatabase, testDatabaseUrl } from '../helpers/service.ts';

// Decided before any test is declared: ava takes declarations only until the file first waits.
const pgbouncer = await pgbouncerBinary();
if ('missing' in pgbouncer && !process.env.CI) process.stderr.write(`${pgbouncer.missing}: the pooled database-down test is skipped\n`);
const poolerTest = 'path' in pgbouncer || process.env.CI ? test.serial : test.serial.skip;

test.after.always(dropTestDatabase);

/**
 * PgBouncer refuses its clients with errors of its own while it cannot reach the server (`server login has been failing,
 * try again later (server_login_retry)`, `pgbouncer cannot connect to server`, `query_wait_timeout`), all SQLSTATE 08P01
 * (class 08, connection exception), as PostgreSQL sends none.
 */
poolerTest('through PgBouncer, a database gone answers 503 database unavailable at every request, never 500', async (t) => {
  if ('missing' in pgbouncer) return t.fail(pgbouncer.missing);
  const direct = await testDatabaseUrl();
  const proxy = await databaseProxy(direct);
  t.teardown(() => proxy.close());
  const pooler = await startPooler(t, { binary: pgbouncer.path, serverUrl: proxy.url, poolSize: 2 });
  const service = await startSampleService(t, {}, { DATABASE_URL: pooler.pooled(proxy.url), DATABASE_DIRECT_URL: direct });
  await createAccount(service, 'default', { username: 'alice', password: 'alice-password-1' });
  const lookup = () => postJson(service, '/api/sample/getOneAccount', { EMPLOYEE_ID: 'alice' });
  t.is((await lookup()).status, 200, 'the tenant is known and cached before the database goes');

  proxy.cut();
  const answers: string[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    const response = await lookup();
    answers.push(`${response.status} ${await response.text()}`);
  }
  t.deepEqual(answers, Array(4).fill('503 {"error":"database unavailable"}'));
  t.deepEqual(
    service.logs().filter((line) => line.msg === 'unhandled error').map((line) => (line.err as { message?: string } | undefined)?.message),
    [],
    'logged as the database, not as a handler bug',
  );
  t.is((await service.fetch('/readyz')).status, 503);
});
