import { randomBytes } from 'node:crypto';
import test from 'ava';
import pg from 'pg';
import { migratedDatabase, serverUrl, type MigratedDatabase } from '../helpers/database.ts';

/**
 * README "For DBAs: migrations, dumps and restores": who may dump. pg_dump sets `row_security`
 * off and reads each table with COPY; PostgreSQL then refuses a table whose policy would apply
 * to the reader rather than hand back part of it. With FORCE ROW LEVEL SECURITY that is the
 * tables' owner too, so only a superuser or a role with BYPASSRLS dumps every tenant's rows.
 * These are the statements pg_dump sends, on a database owned by a role that is no superuser.
 */
const TENANT_TABLES = ['documents', 'document_array_paths', 'spaces', 'space_events', 'account_events'];

let database: MigratedDatabase;
const suffix = randomBytes(4).toString('hex');
const owner = `dump_owner_${suffix}`;
const dumper = `dump_bypass_${suffix}`;

test.before(async () => {
  database = await migratedDatabase(['alpha', 'beta']);
  const { knex } = database;
  for (const tenant of ['alpha', 'beta']) {
    await knex('documents').insert({ tenant, collection: 'notes', id: 'n1', doc: { _id: 'n1', tags: ['a'] } });
    await knex('spaces').insert({ tenant, name: 'ops', schemas: ['s1'] });
    await knex('space_events').insert({ tenant, space: 'ops', action: 'created', at: new Date(), after: { schemas: ['s1'] } });
    await knex('account_events').insert({ tenant, account_uid: 'u1', account_username: 'ann', action: 'created', at: new Date(), fields: ['username'] });
  }
  await knex.raw(`create role ${owner} nologin`);
  await knex.raw(`create role ${dumper} nologin bypassrls`);
  for (const table of TENANT_TABLES) {
    await knex.raw(`alter table ${table} owner to ${owner}`);
    await knex.raw(`grant select on ${table} to ${dumper}`);
  }
});

test.after.always(async () => {
  await database?.close();
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    for (const role of [owner, dumper]) await client.query(`drop role if exists ${role}`);
  } finally {
    await client.end();
  }
});

async function asRole<T>(role: string, rowSecurity: 'on' | 'off', read: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(`set role ${role}`);
    await client.query(`set row_security = ${rowSecurity}`);
    return await read(client);
  } finally {
    await client.end();
  }
}

const copyOf = (table: string) => `copy (select * from ${table}) to stdout`;
const rowsOf = async (client: pg.Client, table: string) => (await client.query(`select count(*)::int as n from ${table}`)).rows[0].n as number;

test('the tables owner, no superuser, cannot dump them: pg_dump stops at the first tenant table', async (t) => {
  for (const table of TENANT_TABLES) {
    const refused = await t.throwsAsync(asRole(owner, 'off', (client) => client.query(copyOf(table))), undefined, table);
    t.regex(refused?.message ?? '', /query would be affected by row-level security policy/, table);
  }
});

test('the tables owner with --enable-row-security dumps no tenant row, without an error', async (t) => {
  for (const table of TENANT_TABLES) t.is(await asRole(owner, 'on', (client) => rowsOf(client, table)), 0, table);
});

test('a role with BYPASSRLS dumps every tenant row', async (t) => {
  for (const table of ['documents', 'spaces', 'space_events', 'account_events']) {
    t.is(await asRole(dumper, 'off', (client) => rowsOf(client, table)), 2, table);
  }
});
