import type { Knex } from 'knex';
import type { Waivers } from '../lib/db/migration-tools.ts';

/**
 * The second wall between tenants (SPEC §4.2): row-level security on every table of tenant
 * data. A row is visible and writable only when its `tenant` equals the session setting
 * `spaceport.tenant`; FORCE applies that to the tables' owner too. The service runs its
 * statements as `spaceport_tenant`, a role without BYPASSRLS that owns nothing (lib/db/
 * tenant-database.ts). A table of tenant data added later belongs in TENANT_TABLES of a
 * migration like this one (test/db/row-level-security.test.ts checks every table with a
 * `tenant` column).
 */
const ROLE = 'spaceport_tenant';
const TENANT_TABLES = ['documents', 'spaces'];
const POLICY = 'tenant_isolation';
const SAME_TENANT = "tenant = current_setting('spaceport.tenant', true)";

/** What the safety check cannot read, and why it is safe. */
export const waivers: Waivers = {
  'do-block': 'its DO blocks only create the role spaceport_tenant unless it exists and grant it, and mark one operator leakproof when run by a superuser: no table, column or type is changed',
};

export async function up(knex: Knex): Promise<void> {
  await createRole(knex);
  await knex.raw('grant select on tenants to ??', [ROLE]);
  for (const table of TENANT_TABLES) {
    await knex.raw('grant select, insert, update, delete on ?? to ??', [table, ROLE]);
    await knex.raw('alter table ?? enable row level security', [table]);
    await knex.raw('alter table ?? force row level security', [table]);
    await knex.raw(`create policy ?? on ?? using (${SAME_TENANT}) with check (${SAME_TENANT})`, [POLICY, table]);
  }
  await letFiltersUseTheDocumentIndex(knex, 'leakproof');
}

export async function down(knex: Knex): Promise<void> {
  await letFiltersUseTheDocumentIndex(knex, 'not leakproof');
  for (const table of [...TENANT_TABLES].reverse()) {
    await knex.raw('drop policy ?? on ??', [POLICY, table]);
    await knex.raw('alter table ?? no force row level security', [table]);
    await knex.raw('alter table ?? disable row level security', [table]);
    await knex.raw('revoke all on ?? from ??', [table, ROLE]);
  }
  await knex.raw('revoke all on tenants from ??', [ROLE]);
  // The role stays: roles belong to the whole PostgreSQL cluster, and other databases on it
  // (other spaceport deployments, parallel test databases) may still use it.
}

/**
 * Creates the role unless it exists (a DBA may have created it beforehand, for an owner without
 * CREATEROLE), and lets the migrating user, who is also the one the service connects as, switch
 * to it. Several databases migrating at once on one cluster may race to create it.
 */
async function createRole(knex: Knex): Promise<void> {
  await knex.raw(`
    do $$
    begin
      if not exists (select from pg_roles where rolname = '${ROLE}') then
        begin
          create role ${ROLE} nologin nobypassrls;
        exception when duplicate_object or unique_violation then null;
        end;
      end if;
      if not pg_has_role(current_user, '${ROLE}', 'member') then
        execute format('grant ${ROLE} to %I', current_user);
      end if;
    end
    $$`);
}

/**
 * Under row-level security PostgreSQL uses an index for a condition only when its functions are
 * leakproof, and `@?` (the operator of field filters, served by the GIN index) is not marked so,
 * although with the lax paths the store writes it raises no error that could reveal a row.
 * Only a superuser may mark it: otherwise the service warns at start-up with the statement a
 * superuser can run (README, Data).
 */
async function letFiltersUseTheDocumentIndex(knex: Knex, marking: 'leakproof' | 'not leakproof'): Promise<void> {
  await knex.raw(`
    do $$
    begin
      if (select rolsuper from pg_roles where rolname = current_user) then
        alter function pg_catalog.jsonb_path_exists_opr(jsonb, jsonpath) ${marking};
      end if;
    end
    $$`);
}
