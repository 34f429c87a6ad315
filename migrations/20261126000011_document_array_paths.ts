import type { Knex } from 'knex';
import { inBatches, withLockRetries } from '../lib/db/migration-tools.ts';

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
 * `..._row_level_security`.
 *
 * The table, the functions and the triggers are made in one short transaction; from its commit on,
 * every write records its own paths. Then the documents already there are walked in batches, a
 * tenant at a time in primary-key order, each batch in a transaction of its own that reads
 * `documents` (holding none of its writes) and records its position, so a walk cut short carries
 * on where it stopped. A document written meanwhile is recorded by its trigger, and recording a
 * path twice changes nothing. Every step can run again: the migration runs outside a transaction.
 */
export const config = { transaction: false };
const ROLE = 'spaceport_tenant';
const POLICY = 'tenant_isolation';
const SAME_TENANT = "tenant = current_setting('spaceport.tenant', true)";

/**
 * Whether a value is or holds an array (`.**` includes the value itself): the trigger's WHEN
 * evaluates it without a function call. For knex.raw, whose `?` is a binding: `\\?` is a question mark.
 */
const HOLDS_AN_ARRAY = (value: string) => `${value} @\\? 'strict $.** \\? (@.type() == "array")'`;

/**
 * Only paths a project could declare matter (lib/documents/index-keys.ts, frozen here): keys of
 * this form, at most this deep. Others are not walked, so a recorded path stays well within
 * PostgreSQL's limit on an index entry, whatever the document's keys.
 */
const DECLARABLE_KEY = "'^[A-Za-z_][A-Za-z0-9_-]{0,62}$'";
const MAX_DECLARED_DEPTH = 16;

/**
 * The paths to arrays in the documents `rows` (tenant, collection, doc): walks only into values
 * holding an array, through objects, along keys a declared path could hold, and stops at each array.
 */
const ARRAY_PATHS = (rows: string) => `
  with recursive walk(tenant, collection, path, depth, value) as (
    select r.tenant, r.collection, e.key, 1, e.value
      from ${rows}, jsonb_each(case when jsonb_typeof(r.doc) = 'object' then r.doc else '{}' end) e
     where ${HOLDS_AN_ARRAY('e.value')} and e.key ~ ${DECLARABLE_KEY}
    union all
    select w.tenant, w.collection, w.path || '.' || e.key, w.depth + 1, e.value
      from walk w, jsonb_each(case when jsonb_typeof(w.value) = 'object' then w.value else '{}' end) e
     where w.depth < ${MAX_DECLARED_DEPTH} and ${HOLDS_AN_ARRAY('e.value')} and e.key ~ ${DECLARABLE_KEY}
  )
  select tenant, collection, path from walk where jsonb_typeof(value) = 'array'`;

export async function up(knex: Knex): Promise<void> {
  await withLockRetries(knex, async (trx) => {
    if (!(await trx.schema.hasTable('document_array_paths'))) {
      await trx.schema.createTable('document_array_paths', (table) => {
        table.string('tenant', 63).notNullable().references('name').inTable('tenants');
        table.string('collection', 128).notNullable();
        // Dotted: declarable keys hold no dot. Text, so that the lookup by path is a leakproof
        // comparison, which row-level security lets reach the index.
        table.text('path').notNullable();
        table.primary(['tenant', 'collection', 'path']);
      });
    }
    await trx.raw(`
      create or replace function documents_note_array_paths() returns trigger language plpgsql as $$
      begin
        insert into document_array_paths (tenant, collection, path)
        ${ARRAY_PATHS('(select new.tenant, new.collection, new.doc) as r(tenant, collection, doc)')}
        on conflict do nothing;
        return null;
      end $$`);
    for (const event of ['insert', 'update']) {
      await trx.raw(`drop trigger if exists documents_array_paths_${event} on documents`);
      await trx.raw(`create trigger documents_array_paths_${event} after ${event} on documents for each row when (${HOLDS_AN_ARRAY('new.doc')}) execute function documents_note_array_paths()`);
    }
    await trx.raw(NO_ARRAYS_AT);
    await trx.raw('grant select, insert on document_array_paths to ??', [ROLE]);
    await trx.raw('alter table document_array_paths enable row level security');
    await trx.raw('alter table document_array_paths force row level security');
    await trx.raw('drop policy if exists ?? on document_array_paths', [POLICY]);
    await trx.raw(`create policy ?? on document_array_paths using (${SAME_TENANT}) with check (${SAME_TENANT})`, [POLICY]);
  });
  // Each batch reads the primary key's next range; without statistics (a restored dump, rows just
  // loaded) the planner may scan the whole table for it instead, every batch.
  await knex.raw('analyze documents');
  await inBatches(knex, { name: '20261126000011_document_array_paths', batch: walkBatch });
}

// Evaluated once per find that relies on it: one primary-key lookup per prefix of each path
// (tenant, from the policy, collection and path), however many rows other tenants recorded.
const NO_ARRAYS_AT = `
  create or replace function documents_no_arrays_at(collection text, paths text[]) returns boolean language plpgsql stable as $$
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
           where a.collection = documents_no_arrays_at.collection and a.path = array_to_string(keys[1:depth], '.')) then
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

/** Where the walk is: the last document done, or the start of the next tenant's (empty collection and id). */
type WalkPosition = { tenant: string; collection: string; id: string };

/**
 * Records the array paths of the next `size` documents of one tenant, with row-level security
 * admitting that tenant's rows (so the owner need not bypass it), and moves to the next tenant
 * once one has no document left.
 */
async function walkBatch(trx: Knex.Transaction, after: WalkPosition | undefined, size: number): Promise<WalkPosition | undefined> {
  const tenant = after?.tenant ?? (await tenantAfter(trx, undefined));
  if (tenant === undefined) return undefined;
  await trx.raw("select set_config('spaceport.tenant', ?, true)", [tenant]);
  const { rows } = await trx.raw<{ rows: Array<{ collection: string; id: string }> }>(
    `with batch as (
       select tenant, collection, id, case when ${HOLDS_AN_ARRAY('doc')} then doc end as holding from documents
        where tenant = ? and (collection, id) > (?, ?) order by collection, id limit ?),
     noted as (
       insert into document_array_paths (tenant, collection, path)
       select distinct * from (${ARRAY_PATHS('(select tenant, collection, holding as doc from batch where holding is not null) as r')}) as found
       on conflict do nothing)
     select collection, id from batch order by collection desc, id desc limit 1`,
    [tenant, after?.collection ?? '', after?.id ?? '', size],
  );
  const last = rows[0];
  if (last !== undefined) return { tenant, collection: last.collection, id: last.id };
  const next = await tenantAfter(trx, tenant);
  return next === undefined ? undefined : { tenant: next, collection: '', id: '' };
}

async function tenantAfter(trx: Knex.Transaction, tenant: string | undefined): Promise<string | undefined> {
  const query = trx('tenants').first('name').orderBy('name');
  const row = (await (tenant === undefined ? query : query.where('name', '>', tenant))) as { name: string } | undefined;
  return row?.name;
}

export async function down(knex: Knex): Promise<void> {
  await withLockRetries(knex, async (trx) => {
    for (const event of ['insert', 'update']) await trx.raw(`drop trigger documents_array_paths_${event} on documents`);
    await trx.raw('drop function documents_note_array_paths()');
    await trx.raw('drop function documents_no_arrays_at(text, text[])');
    await trx.schema.dropTable('document_array_paths');
  });
}
