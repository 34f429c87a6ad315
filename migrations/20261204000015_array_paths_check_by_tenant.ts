import type { Knex } from 'knex';

/**
 * `documents_no_arrays_at(tenant, collection, paths)`: the check a find on a declared path adds
 * when it assumes no arrays (`20261126000011_document_array_paths`), naming its tenant. The
 * two-argument form found the tenant's rows through row-level security alone, which Citus cannot
 * route: from a worker, its `exists` was a query on every shard, refused inside a query on one
 * (SPEC §15.4). With `tenant = $1` it reads one shard, and on plain PostgreSQL the whole primary
 * key. An expand migration: the release before keeps calling the two-argument form.
 */
const FUNCTION = `
create or replace function documents_no_arrays_at(tenant text, collection text, paths text[]) returns boolean language plpgsql stable as $$
declare
  declared text;
  keys text[];
  holding text[] := '{}';
begin
  foreach declared in array paths loop
    keys := string_to_array(declared, '.');
    for depth in 1 .. cardinality(keys) loop
      if exists (
        select from document_array_paths a
         where a.tenant = documents_no_arrays_at.tenant and a.collection = documents_no_arrays_at.collection
           and a.path = array_to_string(keys[1:depth], '.')) then
        holding := holding || declared;
        exit;
      end if;
    end loop;
  end loop;
  if cardinality(holding) = 0 then
    return true;
  end if;
  raise exception using errcode = 'SPD02', message = 'declared paths hold arrays', detail = array_to_json(holding)::text;
end $$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(FUNCTION);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('drop function documents_no_arrays_at(text, text, text[])');
}
