import test from 'ava';
import pg from 'pg';
import { StatementLimit } from '../../lib/db/statement-limit.ts';
import { serverUrl } from '../helpers/database.ts';

/**
 * The statement limit's backstop ends a connection whose statement goes unanswered with pg's
 * public `client.end()`. That `end()` cuts the connection at once while a statement runs, rather
 * than waiting for the server to read its Terminate, is pg's behaviour, not its documentation:
 * these tests fail if an upgrade changes it.
 */
async function connected(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: serverUrl() });
  client.on('error', () => {});
  await client.connect();
  return client;
}

test("pg's end() closes the connection at once while a statement is running", async (t) => {
  const client = await connected();
  const statement = client.query('select pg_sleep(10)');
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = performance.now();
  void client.end();
  const error = await t.throwsAsync(statement);
  t.regex(error?.message ?? '', /Connection terminated/);
  t.true(performance.now() - started < 1000, 'the statement fails at once, not when the server is done');
});

test('a statement over the limit is cut and fails as StatementUnanswered, an unreachable database (08006) unless the caller learns otherwise', async (t) => {
  const client = await connected();
  const limit = new StatementLimit(200);
  t.teardown(() => limit.stop());
  const started = performance.now();
  const error = await t.throwsAsync(limit.watch(client, () => client.query('select pg_sleep(10)')));
  t.like(error, { name: 'StatementUnanswered', code: '08006' });
  t.regex(String((error?.cause as Error | undefined)?.message), /Connection terminated/);
  const elapsed = performance.now() - started;
  t.true(elapsed >= 200 && elapsed < 2000, `cut after ${Math.round(elapsed)} ms`);
});

test('a statement within the limit is left alone', async (t) => {
  const client = await connected();
  const limit = new StatementLimit(2000);
  t.teardown(async () => {
    limit.stop();
    await client.end();
  });
  const { rows } = await limit.watch(client, () => client.query<{ answer: number }>('select 42 as answer'));
  t.deepEqual(rows, [{ answer: 42 }]);
});
