import test from 'ava';
import fc from 'fast-check';
import pg from 'pg';
import { documentStore } from '../../lib/documents/index.ts';
import { statementOf } from '../../lib/db/statement.ts';
import { NO_TENANT, TENANT_ROLE } from '../../lib/db/tenant-database.ts';
import { tenantRows } from '../../lib/tenancy/scope.ts';
import { migratedDatabase, type MigratedDatabase } from '../helpers/database.ts';
import { dropApplicationTenantConditionForTest, withoutApplicationTenantCondition } from '../helpers/row-level-security-alone.ts';
import { checkIsolation, isolationCase, isolationWorlds, OPERATIONS_PER_CASE, type IsolationWorlds } from '../helpers/isolation.ts';
import { auditCase, auditWorlds, checkAuditIsolation, type AuditWorlds } from '../helpers/audit-isolation.ts';
import { checkSpaceIsolation, spaceCase, spaceWorlds, type SpaceWorlds } from '../helpers/space-isolation.ts';

/** A quick search on every `make test`: `make test-stress` runs these properties 1 000 to 2 000 times (test/stress/isolation.test.ts). */
const RUNS = 30;

let database: MigratedDatabase;
let worlds: IsolationWorlds;
let spaces: SpaceWorlds;
let audits: AuditWorlds;
test.before(async () => {
  [database, worlds, spaces, audits] = await Promise.all([migratedDatabase(['alpha', 'beta']), isolationWorlds(), spaceWorlds(), auditWorlds()]);
  await database.knex('documents').insert([
    { tenant: 'alpha', collection: 'notes', id: 'n1', doc: { _id: 'n1', owner: 'alpha' } },
    { tenant: 'beta', collection: 'notes', id: 'n1', doc: { _id: 'n1', owner: 'beta' } },
  ]);
  await database.knex('spaces').insert({ tenant: 'alpha', name: 'ops', schemas: ['s1'] });
  await database.knex('space_events').insert({ tenant: 'alpha', space: 'ops', action: 'created', at: new Date(), after: { schemas: ['s1'] } });
  await database.knex('account_events').insert({ tenant: 'alpha', account_uid: 'u1', account_username: 'ann', action: 'created', at: new Date(), fields: ['username'] });
});
test.after.always(async () => {
  await Promise.all([database?.close(), worlds?.close(), spaces?.close(), audits?.close()]);
});

test.serial('every table with a tenant column has row-level security, forced, with the tenant policy', async (t) => {
  const { rows } = await database.knex.raw(`
    select c.relname as table, c.relrowsecurity as enabled, c.relforcerowsecurity as forced,
           (select string_agg(p.qual, ' ') from pg_policies p where p.tablename = c.relname) as policy
    from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant' and not a.attisdropped
    where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace order by 1`);
  t.deepEqual(rows.map((row: { table: string }) => row.table), ['account_events', 'document_array_paths', 'documents', 'space_events', 'spaces']);
  for (const row of rows as Array<{ table: string; enabled: boolean; forced: boolean; policy: string }>) {
    t.true(row.enabled && row.forced, row.table);
    t.regex(row.policy, /current_setting\('spaceport\.tenant'::text, true\)/, row.table);
  }
});

test.serial('statements on tenant data run as the restricted role, though DATABASE_URL names a superuser', async (t) => {
  const { rows: [owner] } = await database.knex.raw('select rolsuper from pg_roles where rolname = current_user');
  t.true(owner.rolsuper, 'the test database is reached as a superuser');
  const { rows: [session] } = await database.tenantDatabase.query(NO_TENANT, { sql: 'select current_user as role, r.rolsuper, r.rolbypassrls from pg_roles r where r.rolname = current_user', bindings: [] });
  t.deepEqual(session, { role: TENANT_ROLE, rolsuper: false, rolbypassrls: false });
});

test.serial('the restricted role cannot switch row-level security off', async (t) => {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  t.teardown(() => client.end());
  await client.query(`set role ${TENANT_ROLE}`);
  await client.query('set row_security = off');
  const refused = await t.throwsAsync(client.query('select * from documents'));
  t.regex(refused?.message ?? '', /would be affected by row-level security/);
});

test.serial('without a tenant a session sees no tenant row at all', async (t) => {
  for (const table of ['documents', 'spaces', 'space_events', 'account_events']) {
    const { rows } = await database.tenantDatabase.query(NO_TENANT, { sql: `select count(*)::int as count from ${table}`, bindings: [] });
    t.is(rows[0]?.count, 0, table);
  }
});

test.serial('a row for another tenant cannot be written, whatever the statement says', async (t) => {
  const insert = { sql: 'insert into documents (tenant, collection, id, doc) values ($1, $2, $3, $4)', bindings: ['alpha', 'notes', 'forged', '{"_id":"forged"}'] };
  const refused = await t.throwsAsync(database.tenantDatabase.query('beta', insert));
  t.regex(refused?.message ?? '', /row-level security/);
  const moved = await database.tenantDatabase.query('beta', { sql: "update documents set tenant = 'alpha' where id = 'n1'", bindings: [] }).catch((error: Error) => error);
  t.true(moved instanceof Error && /row-level security/.test(moved.message));
  t.deepEqual(await database.knex('documents').where({ id: 'forged' }), []);
});

test.serial('the test switch really drops the application condition, and then row-level security alone keeps tenants apart', async (t) => {
  const restore = dropApplicationTenantConditionForTest();
  try {
    const statement = withoutApplicationTenantCondition(statementOf(tenantRows('documents', 'beta').select('doc')));
    t.notRegex(statement.sql, /tenant/);
    // The owner (a superuser bypasses row-level security) sees both tenants through it...
    const { rows: asOwner } = await database.knex.raw(statement.sql.replace(/\$\d+/g, '?'), [...statement.bindings] as string[]);
    t.is(asOwner.length, 2);
    // ...the service's role sees only its own.
    const { rows: asTenant } = await database.tenantDatabase.query<{ doc: { owner: string } }>('beta', statement);
    t.deepEqual(asTenant.map((row) => row.doc.owner), ['beta']);
    t.deepEqual(await documentStore(database.tenantDatabase, 'beta').collection('notes').find({ $or: [{ owner: 'alpha' }, { owner: 'beta' }] }).toArray(), [{ _id: 'n1', owner: 'beta' }]);
  } finally {
    restore();
  }
});

test.serial(`row-level security alone: no filter lets a tenant see or change another's rows (${RUNS} cases × ${OPERATIONS_PER_CASE} operations)`, async (t) => {
  const restore = dropApplicationTenantConditionForTest();
  try {
    await fc.assert(fc.asyncProperty(isolationCase, (example) => checkIsolation(worlds, example)), { numRuns: RUNS });
  } finally {
    restore();
  }
  t.pass();
});

test.serial(`row-level security alone keeps spaces apart, under concurrent writes of the same names (${RUNS} cases)`, async (t) => {
  const restore = dropApplicationTenantConditionForTest();
  try {
    await fc.assert(fc.asyncProperty(spaceCase, (steps) => checkSpaceIsolation(spaces, steps)), { numRuns: RUNS });
  } finally {
    restore();
  }
  t.pass();
});

test.serial(`row-level security alone keeps the audit apart: account and space events, every filter (${RUNS} cases)`, async (t) => {
  const restore = dropApplicationTenantConditionForTest();
  try {
    await fc.assert(fc.asyncProperty(auditCase, (steps) => checkAuditIsolation(audits, steps)), { numRuns: RUNS });
  } finally {
    restore();
  }
  t.pass();
});

test.serial('a pooled connection never carries one tenant into another statement, failures included', async (t) => {
  const step = fc.record({ tenant: fc.constantFrom('alpha', 'beta', NO_TENANT), fails: fc.boolean() });
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), async (steps) => {
      const seen = await Promise.all(
        steps.map(async ({ tenant, fails }) => {
          const sql = fails ? 'select 1 / 0' : "select coalesce(string_agg(doc->>'owner', ','), '') as owners, current_setting('spaceport.tenant', true) as setting from documents";
          const result = await database.tenantDatabase.query<{ owners: string; setting: string }>(tenant, { sql, bindings: [] }).catch(() => undefined);
          return { tenant, row: result?.rows[0] };
        }),
      );
      for (const { tenant, row } of seen) {
        if (row === undefined) continue;
        if (row.setting !== tenant || row.owners !== tenant) throw new Error(`a statement for "${tenant}" ran as "${row.setting}" and saw "${row.owners}"`);
      }
    }),
    { numRuns: 100 },
  );
  t.pass();
});
