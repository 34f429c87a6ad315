import test from 'ava';
import pg from 'pg';
import { isStalePlan, PreparedStatements } from '../../lib/db/prepared-statements.ts';
import { queryInScope, type StatementScope } from '../../lib/db/scoped-query.ts';
import { TENANT_ROLE, TENANT_SETTING, TenantDatabase } from '../../lib/db/tenant-database.ts';
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

/** The statements this session holds prepared, and how often each was planned for its values or generically. */
async function preparedHere(): Promise<Array<{ name: string; statement: string; custom: number; generic: number }>> {
  const { rows } = await client.query('select name, statement, custom_plans::int as custom, generic_plans::int as generic from pg_prepared_statements order by prepare_time, name');
  return rows;
}

test.serial('each text is prepared once per connection, scope and statement, and planned for its values every time', async (t) => {
  await client.query('deallocate all');
  const prepared = new PreparedStatements();
  for (const tenant of ['alpha', 'beta', 'alpha', 'beta', 'alpha', 'beta', 'alpha', 'beta']) {
    const { rows } = await queryInScope(client, { ...SCOPE, tenant }, `${SETTINGS}, $1::text as echoed`, [tenant], { prepared });
    t.like(rows[0], { role: TENANT_ROLE, tenant, timeout: '1234ms', idle: '4321ms', echoed: tenant });
  }
  const held = await preparedHere();
  t.is(held.length, 2, 'the scope and the statement, whatever the number of times sent');
  for (const statement of held) t.regex(statement.name, /^spaceport_[0-9a-f]{24}$/);
  t.like(held[1], { statement: `${SETTINGS}, $1::text as echoed`, custom: 8, generic: 0 }, 'never a generic plan, which PostgreSQL would otherwise try from the sixth run');
  t.true(prepared.kept);
  t.deepEqual(await sessionSettings(), { role: 'postgres', tenant: '', timeout: '0', idle: '0' });
});

test.serial('a connection keeps at most 100 statements prepared, and a long statement is never kept', async (t) => {
  await client.query('deallocate all');
  const prepared = new PreparedStatements();
  for (let n = 0; n < 150; n += 1) {
    const { rows } = await queryInScope(client, SCOPE, `select $1::int + ${n} as sum`, [1], { prepared });
    t.is(rows[0].sum, n + 1);
  }
  const held = await preparedHere();
  t.is(held.length, 100);
  t.true(held.some((statement) => statement.statement.includes('set_config')), 'the scope, used by every statement, is kept');
  t.true(held.some((statement) => statement.statement === 'select $1::int + 149 as sum'), 'the latest is kept');
  t.false(held.some((statement) => statement.statement === 'select $1::int + 0 as sum'), 'the least recently used went');
  const long = `select $1::text as echoed -- ${'x'.repeat(5000)}`;
  t.like((await queryInScope(client, SCOPE, long, ['long'], { prepared })).rows[0], { echoed: 'long' });
  t.false((await preparedHere()).some((statement) => statement.statement === long));
});

test.serial('a connection that no longer holds the prepared statements, as through a transaction-mode pooler, answers all the same, and everything is parsed from then on', async (t) => {
  await client.query('deallocate all');
  let givenUp = 0;
  const prepared = new PreparedStatements(() => {
    givenUp += 1;
  });
  await queryInScope(client, SCOPE, SETTINGS, [], { prepared });
  // A pooler's next server connection: the names are not there.
  await client.query('deallocate all');
  for (const tenant of ['alpha', 'beta']) {
    const { rows } = await queryInScope(client, { ...SCOPE, tenant }, `${SETTINGS}, $1::text as echoed`, ['value'], { prepared });
    t.like(rows[0], { role: TENANT_ROLE, tenant, echoed: 'value' });
  }
  t.false(prepared.kept);
  t.is(givenUp, 1, 'told once');
  t.deepEqual(await preparedHere(), [], 'nothing prepared once given up');
});

test.serial('a connection that holds the names already, prepared by another client through a pooler, answers all the same', async (t) => {
  await client.query('deallocate all');
  await queryInScope(client, SCOPE, SETTINGS, [], { prepared: new PreparedStatements() });
  const another = new PreparedStatements();
  const { rows } = await queryInScope(client, { ...SCOPE, tenant: 'beta' }, SETTINGS, [], { prepared: another });
  t.like(rows[0], { role: TENANT_ROLE, tenant: 'beta' });
  t.is((await preparedHere()).length, 2, 'each replaced, not doubled');
  t.true(another.kept, 'a name held already is no reason to give up');
});

test.serial('a statement that failed, whether it was parsed or not, runs at its next use', async (t) => {
  await client.query('deallocate all');
  const prepared = new PreparedStatements();
  await t.throwsAsync(queryInScope(client, SCOPE, 'select no_such_column', [], { prepared }), { message: /no_such_column/ });
  await t.throwsAsync(queryInScope(client, SCOPE, 'select 1 / $1::int as quotient', [0], { prepared }), { message: /division by zero/ });
  t.like((await queryInScope(client, SCOPE, 'select 1 / $1::int as quotient', [1], { prepared })).rows[0], { quotient: 1 });
  await t.throwsAsync(queryInScope(client, { ...SCOPE, role: 'no_such_role_here' }, 'select 2 / $1::int as quotient', [1], { prepared }), { message: /no_such_role_here/ });
  t.like((await queryInScope(client, SCOPE, 'select 2 / $1::int as quotient', [1], { prepared })).rows[0], { quotient: 2 });
  t.like((await queryInScope(client, SCOPE, SETTINGS, [], { prepared })).rows[0], { role: TENANT_ROLE, tenant: 'alpha' });
  t.true(prepared.kept);
});

test.serial('a prepared statement whose columns a migration changed (select * after a column was added) answers with them, unnamed from then on', async (t) => {
  await client.query('deallocate all');
  await client.query('drop table if exists prepared_columns; create table prepared_columns (a int); insert into prepared_columns values (1); grant select on prepared_columns to spaceport_tenant');
  const prepared = new PreparedStatements();
  const read = 'select * from prepared_columns where a = $1';
  t.deepEqual((await queryInScope(client, SCOPE, read, [1], { prepared })).rows, [{ a: 1 }]);
  await client.query('alter table prepared_columns add column b int default 2');
  for (let n = 0; n < 3; n += 1) t.deepEqual((await queryInScope(client, SCOPE, read, [1], { prepared })).rows, [{ a: 1, b: 2 }]);
  t.true(prepared.kept);
  // A pooler keeping statements for its clients would keep the stale one whatever it is sent as: it is not prepared again.
  const kept = (await preparedHere()).filter((statement) => statement.statement === read);
  t.deepEqual(kept.map((statement) => statement.custom), [1], 'the stale statement, run once before the migration, never again');
  await client.query('drop table prepared_columns');
});

test.serial('statements that failed still count toward the 100 a connection keeps, so the server never holds more', async (t) => {
  await client.query('deallocate all');
  const prepared = new PreparedStatements();
  for (let n = 0; n < 150; n += 1) {
    await t.throwsAsync(queryInScope(client, SCOPE, `select 1 / $1::int + ${n} as quotient`, [0], { prepared }), { message: /division by zero/ });
  }
  t.true((await preparedHere()).length <= 100);
  t.true(prepared.kept);
});

test.serial('a scope that fails still makes room: the server never holds more than 100', async (t) => {
  await client.query('deallocate all');
  const prepared = new PreparedStatements();
  for (let n = 0; n < 100; n += 1) await queryInScope(client, SCOPE, `select $1::int + ${n} as sum`, [1], { prepared });
  for (let n = 0; n < 50; n += 1) {
    await t.throwsAsync(queryInScope(client, { ...SCOPE, role: 'no_such_role_here' }, `select $1::int - ${n} as difference`, [1], { prepared }), { message: /no_such_role_here/ });
  }
  for (let n = 0; n < 100; n += 1) await queryInScope(client, SCOPE, `select $1::int * ${n} as product`, [1], { prepared });
  t.true((await preparedHere()).length <= 100);
  t.like((await queryInScope(client, SCOPE, 'select $1::int - 3 as difference', [1], { prepared })).rows[0], { difference: -2 });
});

test('a stale plan is told by the routine that raises it, whatever language the server speaks', (t) => {
  t.true(isStalePlan({ code: '0A000', routine: 'RevalidateCachedQuery', message: 'gecachter Plan darf den Ergebnistyp nicht ändern' }));
  t.false(isStalePlan({ code: '0A000', routine: 'transformExpr', message: 'cached plan must not change result type' }));
});

test.serial('DATABASE_PREPARED_STATEMENTS=false (preparedStatements: false) leaves nothing prepared; by default the scope and the statement are', async (t) => {
  const count = "select count(*)::int as prepared from pg_prepared_statements where name like 'spaceport\\_%'";
  for (const [preparedStatements, expected] of [[false, 0], [undefined, 2]] as const) {
    const tenantDatabase = new TenantDatabase(database.url, { poolMax: 1, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
    try {
      await tenantDatabase.query('alpha', { sql: count, bindings: [] });
      const { rows } = await tenantDatabase.query<{ prepared: number }>('alpha', { sql: count, bindings: [] });
      t.is(rows[0]?.prepared, expected, String(preparedStatements));
    } finally {
      await tenantDatabase.close();
    }
  }
});

test.serial('a write goes unnamed after its prepared scope, and its transaction keeps PostgreSQL’s own plan choice (a trigger’s statements are not planned again on every row)', async (t) => {
  await client.query('deallocate all');
  const prepared = new PreparedStatements();
  const insert = "insert into documents (tenant, collection, id, doc) values ($1, 'notes', $2, '{}') returning current_setting('plan_cache_mode') as mode";
  t.deepEqual((await queryInScope(client, SCOPE, insert, ['alpha', 'w1'], { prepared })).rows, [{ mode: 'auto' }]);
  t.like((await queryInScope(client, SCOPE, "select current_setting('plan_cache_mode') as mode", [], { prepared })).rows[0], { mode: 'force_custom_plan' });
  const held = (await preparedHere()).map((statement) => statement.statement);
  t.is(held.length, 3, 'the two scopes and the read');
  t.false(held.includes(insert));
});
