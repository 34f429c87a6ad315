import type { Knex } from 'knex';
import type { Waivers } from '../lib/db/migration-tools.ts';

/**
 * Written before the rules of SPEC §18: every database past its date ran it, and one that has not
 * yet upgrades with the service stopped (README, For DBAs). What it holds, and why:
 */
export const waivers: Waivers = {
  'adding-field-with-default': 'gen_random_uuid() is volatile, so adding the column rewrites spaces (one short row per space) under its lock.',
};

/**
 * ETags and history of spaces (SPEC §6.5, §6.6). `version` is a new random value on every
 * write: a strong validator that a delete and a re-create of one name can never repeat, and
 * that says nothing about other tenants' writes (a shared counter would). `space_events` keeps
 * one event per change, written in the change's transaction; it is tenant data, so tenant
 * first in its keys (SPEC §4.3) and row-level security as in `..._row_level_security`. Events
 * are never updated: the service's role may only read and add them.
 */
const ROLE = 'spaceport_tenant';
const POLICY = 'tenant_isolation';
const SAME_TENANT = "tenant = current_setting('spaceport.tenant', true)";
const ACTIONS = ['created', 'updated', 'deleted', 'restored', 'purged'];

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('spaces', (table) => {
    table.uuid('version').notNullable().defaultTo(knex.raw('gen_random_uuid()'));
  });
  await knex.schema.createTable('space_events', (table) => {
    table.string('tenant', 63).notNullable().references('name').inTable('tenants');
    table.bigInteger('id').notNullable();
    table.string('space', 64).notNullable();
    table.text('action').notNullable();
    table.timestamp('at', { useTz: true }).notNullable();
    table.text('actor_uid');
    table.text('actor_username');
    table.text('request_id').notNullable().defaultTo('');
    table.jsonb('before');
    table.jsonb('after');
    table.primary(['tenant', 'id']);
    table.index(['tenant', 'space', 'at', 'id'], 'space_events_by_space');
  });
  await knex.raw('alter table space_events alter column id add generated always as identity');
  await knex.raw(`alter table space_events add constraint space_events_action check (action in (${ACTIONS.map((action) => `'${action}'`).join(', ')}))`);
  await knex.raw('grant select, insert on space_events to ??', [ROLE]);
  await knex.raw('alter table space_events enable row level security');
  await knex.raw('alter table space_events force row level security');
  await knex.raw(`create policy ?? on space_events using (${SAME_TENANT}) with check (${SAME_TENANT})`, [POLICY]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('space_events');
  await knex.schema.alterTable('spaces', (table) => {
    table.dropColumn('version');
  });
}
