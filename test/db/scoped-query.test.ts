import test from 'ava';
import pg from 'pg';
import { queryInScope, type StatementScope } from '../../lib/db/scoped-query.ts';
import { TENANT_ROLE, TENANT_SETTING } from '../../lib/db/tenant-database.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';

// queryInScope sends a statement and its scope before one Sync, through a part of pg's Query
// that its documented API does not cover: these tests fail if a pg upgrade changes it.

let database: MigratedDatabase;
let client: pg.Client;

test.before(async () => {
  database = await migratedDatabase(['alpha']);
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
test.after.always(async () => {
  await client?.end();
  await database?.close();
});

const SCOPE: StatementScope = { role: TENANT_ROLE, tenantSetting: TENANT_SETTING, tenant: 'alpha', statementTimeout: '1234', tag: 'spaceport/test/1', idleInTransactionTimeout: '4321' };
const SETTINGS = "select current_user as role, current_setting('spaceport.tenant', true) as tenant, current_setting('statement_timeout') as timeout, current_setting('idle_in_transaction_session_timeout') as idle";

/** The session's own settings; an unset tenant reads as '' (PostgreSQL answers null until the name is first set). */
async function sessionSettings(): Promise<Record<string, unknown>> {
  const { rows: [settings] } = await client.query(SETTINGS);
  return { ...settings, tenant: settings.tenant ?? '' };
}

test.serial('a statement runs under its scope, and the session keeps nothing of it', async (t) => {
  const before = await sessionSettings();
  const { rows, rowCount, command } = await queryInScope(client, SCOPE, `${SETTINGS}, $1::text as echoed`, ['value']);
  t.deepEqual(rows, [{ role: TENANT_ROLE, tenant: 'alpha', timeout: '1234ms', idle: '4321ms', echoed: 'value' }]);
  t.deepEqual({ rowCount, command }, { rowCount: 1, command: 'SELECT' }, "the result is the statement's, not the scope's");
  t.deepEqual(await sessionSettings(), before);
  t.is(client.getTransactionStatus(), 'I');
});

test.serial('a statement without values is scoped too', async (t) => {
  const { rows } = await queryInScope(client, SCOPE, SETTINGS, []);
  t.like(rows[0], { role: TENANT_ROLE, tenant: 'alpha' });
});

test.serial("a write's result is its own: command and row count", async (t) => {
  const insert = "insert into documents (tenant, collection, id, doc) values ($1, 'notes', 'n1', '{}'), ($1, 'notes', 'n2', '{}')";
  const { command, rowCount } = await queryInScope(client, SCOPE, insert, ['alpha']);
  t.deepEqual({ command, rowCount }, { command: 'INSERT', rowCount: 2 });
  const refused = await t.throwsAsync(queryInScope(client, { ...SCOPE, tenant: 'beta' }, insert.replace('n1', 'n3').replace('n2', 'n4'), ['alpha']));
  t.regex(refused?.message ?? '', /row-level security/, 'the scope really is the statement’s: another tenant cannot write these rows');
});

test.serial('a begin sent in scope keeps the scope for its whole transaction, and it ends with it', async (t) => {
  await queryInScope(client, SCOPE, 'begin', []);
  t.is(client.getTransactionStatus(), 'T');
  t.like((await client.query(SETTINGS)).rows[0], { role: TENANT_ROLE, tenant: 'alpha', timeout: '1234ms', idle: '4321ms' });
  await client.query('rollback');
  t.deepEqual(await sessionSettings(), { role: 'postgres', tenant: '', timeout: '0', idle: '0' }, 'the idle-in-transaction limit is the transaction’s, never the session’s (a pooler hands the session on)');
});

test.serial("the statement's time limit is PostgreSQL's: it cancels the statement", async (t) => {
  const cancelled = await t.throwsAsync(queryInScope(client, { ...SCOPE, statementTimeout: '100' }, 'select pg_sleep(2)', []));
  t.like(cancelled, { code: '57014' });
  t.is(client.getTransactionStatus(), 'I');
});

test.serial('a scope that cannot be taken fails the statement, and the connection stays usable', async (t) => {
  const refused = await t.throwsAsync(queryInScope(client, { ...SCOPE, role: 'no_such_role_here' }, 'select 1', []));
  t.regex(refused?.message ?? '', /role "no_such_role_here" does not exist/);
  t.deepEqual((await client.query('select 1 as ok')).rows, [{ ok: 1 }]);
});
