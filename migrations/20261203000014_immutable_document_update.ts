import type { Knex } from 'knex';

/**
 * `documents_updated`: the document update (`documents_apply_update`) declared `IMMUTABLE`, as
 * it truly is (it reads nothing but its arguments), for the UPDATE statement to call on a row's
 * document: Citus refuses a `STABLE` function over column values in an `UPDATE` (SPEC §15.4).
 * A function of its own rather than `documents_apply_update` made `IMMUTABLE`: an upsert calls
 * that one with constant arguments in a CASE branch, which PostgreSQL would then evaluate while
 * planning, even when the branch is not taken (and fail on an update that only applies to the
 * matched document). An expand migration: the release before keeps calling what it called.
 */
const FUNCTION = `
create or replace function documents_updated(doc jsonb, operations jsonb) returns jsonb
language plpgsql immutable as $$
begin
  return documents_apply_update(doc, operations);
end $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(FUNCTION);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function documents_updated(jsonb, jsonb)');
}
