import type { Knex } from 'knex';
import type { Waivers } from '../lib/db/migration-tools.ts';

/**
 * Written before the rules of SPEC §18: every database past its date ran it, and one that has not
 * yet upgrades with the service stopped (README, For DBAs). What it holds, and why:
 */
export const waivers: Waivers = {
  'require-concurrent-index-creation': 'space_events holds one short row per change of a space; the index is built in the transaction that creates account_events beside it.',
};

/**
 * The audit of accounts (`GET /audit`): `account_events` keeps one event per account created or
 * changed, written in the change's own transaction. It records which fields changed, by name
 * only: never a value, so never a password or its hash. Tenant data: tenant first in its keys
 * and row-level security as in `..._row_level_security`; the service's role may only read and
 * add events. `space_events_by_time` lets `/audit` read a tenant's space events newest first
 * without sorting them all.
 */
const ROLE = 'spaceport_tenant';
const POLICY = 'tenant_isolation';
const SAME_TENANT = "tenant = current_setting('spaceport.tenant', true)";

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_events', (table) => {
    table.string('tenant', 63).notNullable().references('name').inTable('tenants');
    table.bigInteger('id').notNullable();
    table.text('account_uid').notNullable();
    table.text('account_username').notNullable();
    table.text('action').notNullable();
    table.timestamp('at', { useTz: true }).notNullable();
    table.text('actor_uid');
    table.text('actor_username');
    table.boolean('actor_cli').notNullable().defaultTo(false);
    table.text('request_id').notNullable().defaultTo('');
    table.specificType('fields', 'text[]').notNullable();
    table.primary(['tenant', 'id']);
    table.index(['tenant', 'at', 'id'], 'account_events_by_time');
  });
  await knex.raw('alter table account_events alter column id add generated always as identity');
  await knex.raw("alter table account_events add constraint account_events_action check (action in ('created', 'updated'))");
  await knex.raw('grant select, insert on account_events to ??', [ROLE]);
  await knex.raw('alter table account_events enable row level security');
  await knex.raw('alter table account_events force row level security');
  await knex.raw(`create policy ?? on account_events using (${SAME_TENANT}) with check (${SAME_TENANT})`, [POLICY]);
  await knex.schema.alterTable('space_events', (table) => {
    table.index(['tenant', 'at', 'id'], 'space_events_by_time');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('space_events', (table) => {
    table.dropIndex(['tenant', 'at', 'id'], 'space_events_by_time');
  });
  await knex.schema.dropTable('account_events');
}
