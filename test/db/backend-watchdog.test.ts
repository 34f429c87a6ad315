import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import type { TenantDatabase } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, serverUrl, type MigratedDatabase, testTenantDatabase } from '../helpers/database.ts';
import { boundUnderLoad } from '../helpers/machine-load.ts';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.ts';

// SPEC §17.3: what is allowed finishes or is cancelled within the statement limit in PostgreSQL
// too. A statement deaf to its cancel (statement_timeout, then pg_cancel_backend) is terminated:
// cutting the service's socket alone leaves the backend running. Through a transaction-mode
// PgBouncer as well, where the backend of a statement is not that of its client connection.

const LIMIT_MS = 500;
/** How long after the limit no backend of the statement may still run (SPEC §17.6: 2 s). */
const GONE_WITHIN_MS = 2000;

const pgbouncer = await pgbouncerBinary();
if ('missing' in pgbouncer && !process.env.CI) process.stderr.write(`${pgbouncer.missing}: the pooler watchdog test is skipped\n`);
const poolerTest = 'path' in pgbouncer || process.env.CI ? test.serial : test.serial.skip;

let database: MigratedDatabase;
let pooler: PgBouncer | undefined;
let marker = 0;

test.before(async () => {
  database = await migratedDatabase(['acme']);
  if ('path' in pgbouncer) pooler = await startPgBouncer({ binary: pgbouncer.path, serverUrl: serverUrl(), poolSize: 2 });
});
test.after.always(async () => {
  await pooler?.stop();
  await database?.close();
});

/** A statement that swallows every cancel, its own time limit's included: only termination ends it. */
function deafStatement(name: string): string {
  return `do $$ begin /* ${name} */ loop begin perform pg_sleep(10); exception when query_canceled then null; end; end loop; end $$`;
}

/** The backends still running the statement marked `name`. */
async function backendsRunning(knex: Knex, name: string): Promise<number[]> {
  const { rows } = await knex.raw<{ rows: Array<{ pid: number }> }>(
    "select pid from pg_stat_activity where query like ? and state <> 'idle' and pid <> pg_backend_pid()",
    [`%/* ${name} */%`],
  );
  return rows.map((row) => row.pid);
}

/** Whatever the test leaves running is ended, so a failure here never loads the shared server. */
function endLeftovers(t: ExecutionContext, name: string): void {
  t.teardown(async () => {
    for (const pid of await backendsRunning(database.knex, name)) await database.knex.raw('select pg_terminate_backend(?)', [pid]);
  });
}

type Send = (database: TenantDatabase, sql: string) => Promise<unknown>;
const alone: Send = (database, sql) => database.query('acme', { sql, bindings: [] });
const inTransaction: Send = (database, sql) => database.transaction('acme', async (run) => run({ sql, bindings: [] }));

async function provesBackendEnded(t: ExecutionContext, url: string, send: Send = alone): Promise<void> {
  marker += 1;
  const name = `deaf-statement-${process.pid}-${marker}`;
  endLeftovers(t, name);
  const limited = testTenantDatabase(url, { queryTimeoutMs: LIMIT_MS });
  t.teardown(() => limited.close());
  const started = performance.now();
  await t.throwsAsync(send(limited, deafStatement(name)));
  t.true(performance.now() - started < LIMIT_MS + boundUnderLoad(2500), 'the caller gets its error promptly');
  const goneWithin = boundUnderLoad(GONE_WITHIN_MS);
  const deadline = started + LIMIT_MS + goneWithin;
  let running = await backendsRunning(database.knex, name);
  while (running.length > 0 && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = await backendsRunning(database.knex, name);
  }
  t.deepEqual(running, [], `no backend runs the statement ${goneWithin} ms after its limit`);
}

test.serial('a statement deaf to its cancel is terminated in PostgreSQL within 2 s of its limit', async (t) => {
  await provesBackendEnded(t, database.url);
});

poolerTest('through a transaction-mode PgBouncer too', async (t) => {
  await provesBackendEnded(t, (pooler as PgBouncer).pooled(database.url));
});

test.serial('a statement of a transaction too', async (t) => {
  await provesBackendEnded(t, database.url, inTransaction);
});

poolerTest('a statement of a transaction through a transaction-mode PgBouncer too', async (t) => {
  await provesBackendEnded(t, (pooler as PgBouncer).pooled(database.url), inTransaction);
});

test.serial('a statement within the limit carries no tag once done: the session keeps its own application name', async (t) => {
  const limited = testTenantDatabase(database.url, { queryTimeoutMs: LIMIT_MS, poolMax: 1 });
  t.teardown(() => limited.close());
  const during = await limited.query<{ name: string }>('acme', { sql: "select current_setting('application_name') as name", bindings: [] });
  t.regex(during.rows[0]?.name ?? '', /^spaceport\/[0-9a-f]{8}\/\d+$/, 'a statement runs under its tag');
  const { rows } = await database.knex.raw<{ rows: Array<{ name: string }> }>("select application_name as name from pg_stat_activity where application_name like 'spaceport/%' and datname = current_database()");
  t.deepEqual(rows, [], 'no idle connection keeps a tag');
});

test.serial('statements given up on at once are all ended, their signals sent together on the watchdog’s one connection (never a second query while one runs)', async (t) => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(warning.message);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  marker += 1;
  const names = [1, 2, 3, 4, 5].map((each) => `deaf-statement-${process.pid}-${marker}-${each}`);
  for (const name of names) endLeftovers(t, name);
  const limited = testTenantDatabase(database.url, { queryTimeoutMs: LIMIT_MS, poolMax: names.length, tenantConnections: names.length });
  t.teardown(() => limited.close());
  const started = performance.now();
  await Promise.all(names.map((name) => t.throwsAsync(alone(limited, deafStatement(name)))));
  const goneWithin = boundUnderLoad(GONE_WITHIN_MS);
  let running = (await Promise.all(names.map((name) => backendsRunning(database.knex, name)))).flat();
  while (running.length > 0 && performance.now() < started + LIMIT_MS + goneWithin) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = (await Promise.all(names.map((name) => backendsRunning(database.knex, name)))).flat();
  }
  t.deepEqual(running, [], `no backend runs any of them ${goneWithin} ms after the limit`);
  t.deepEqual(warnings.filter((message) => message.includes('already executing a query')), []);
});
