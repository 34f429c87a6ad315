import type { Knex } from 'knex';

/**
 * Which paths of a tenant's collection have ever held an array (MongoDB calls such an index
 * "multikey"). A declared index keys each document on the value at its path, which cannot show
 * that an array there holds a matching element: a find on a declared path reads those documents
 * a second way and rechecks them, and that second read costs as much as the first to plan.
 * `document_array_paths` lets a find skip it while no document of the tenant's collection holds
 * an array along the path, and prove so in the same statement (`documents_no_arrays_at`).
 *
 * Written by the database itself, in the writing statement's own transaction: after each insert
 * or update of a document that holds an array anywhere (the trigger's WHEN, checked without a
 * function call, so other documents cost next to nothing), its trigger records each path from the
 * top, through objects, to an array. A path is never forgotten: deleting the document does not
 * remove it. Tenant data: tenant first in its key, row-level security as in
 * `..._row_level_security`. The existing documents are walked once here, which holds writes to
 * `documents` until the migration commits (about ten seconds per million documents).
 */
const ROLE = 'spaceport_tenant';
const POLICY = 'tenant_isolation';
const SAME_TENANT = "tenant = current_setting('spaceport.tenant', true)";

/**
 * Whether a value is or holds an array (`.**` includes the value itself): the trigger's WHEN
 * evaluates it without a function call. For knex.raw, whose `?` is a binding: `\\?` is a question mark.
 */
const HOLDS_AN_ARRAY = (value: string) => `${value} @\\? 'strict $.** \\? (@.type() == "array")'`;

/**
 * The paths to arrays in the documents `rows` (tenant, collection, doc): walks only into values
 * holding an array, through objects, and stops at each array.
 */
const ARRAY_PATHS = (rows: string) => `
  with recursive walk(tenant, collection, path, value) as (
    select r.tenant, r.collection, array[e.key], e.value
      from ${rows}, jsonb_each(case when jsonb_typeof(r.doc) = 'object' then r.doc else '{}' end) e
     where ${HOLDS_AN_ARRAY('e.value')}
    union all
    select w.tenant, w.collection, w.path || e.key, e.value
      from walk w, jsonb_each(case when jsonb_typeof(w.value) = 'object' then w.value else '{}' end) e
     where ${HOLDS_AN_ARRAY('e.value')}
  )
  select tenant, collection, path from walk where jsonb_typeof(value) = 'array'`;

/** The declared paths (`paths`, dotted) of the tenant's `collection` (row-level security) that hold an array, at the path or along it. */
const HOLDING_ARRAYS = `
  from unnest(paths) as declared join document_array_paths a
    on a.collection = documents_no_arrays_at.collection and a.path = (string_to_array(declared, '.'))[1:cardinality(a.path)]`;

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('document_array_paths', (table) => {
    table.string('tenant', 63).notNullable().references('name').inTable('tenants');
    table.string('collection', 128).notNullable();
    table.specificType('path', 'text[]').notNullable();
    table.primary(['tenant', 'collection', 'path']);
  });
  await knex.raw(`
    create function documents_note_array_paths() returns trigger language plpgsql as $$
    begin
      insert into document_array_paths (tenant, collection, path)
      ${ARRAY_PATHS('(select new.tenant, new.collection, new.doc) as r(tenant, collection, doc)')}
      on conflict do nothing;
      return null;
    end $$`);
  for (const event of ['insert', 'update']) {
    await knex.raw(`create trigger documents_array_paths_${event} after ${event} on documents for each row when (${HOLDS_AN_ARRAY('new.doc')}) execute function documents_note_array_paths()`);
  }
  // Evaluated once per find that relies on it: the common answer takes one cached query; the
  // paths are only gathered for the error.
  await knex.raw(`
    create function documents_no_arrays_at(collection text, paths text[]) returns boolean language plpgsql stable as $$
    begin
      if not exists (select ${HOLDING_ARRAYS}) then
        return true;
      end if;
      raise exception using errcode = 'SPD02', message = 'declared paths hold arrays', detail = (
        select array_to_json(array_agg(distinct declared))::text ${HOLDING_ARRAYS});
    end $$`);
  await knex.raw(`insert into document_array_paths (tenant, collection, path) select distinct * from (${ARRAY_PATHS(`(select tenant, collection, doc from documents where ${HOLDS_AN_ARRAY('doc')}) as r`)}) as found`);
  await knex.raw('grant select, insert on document_array_paths to ??', [ROLE]);
  await knex.raw('alter table document_array_paths enable row level security');
  await knex.raw('alter table document_array_paths force row level security');
  await knex.raw(`create policy ?? on document_array_paths using (${SAME_TENANT}) with check (${SAME_TENANT})`, [POLICY]);
}

export async function down(knex: Knex): Promise<void> {
  for (const event of ['insert', 'update']) await knex.raw(`drop trigger documents_array_paths_${event} on documents`);
  await knex.raw('drop function documents_note_array_paths()');
  await knex.raw('drop function documents_no_arrays_at(text, text[])');
  await knex.schema.dropTable('document_array_paths');
}
