import type { Knex } from 'knex';
import { sql, statementOf, type SqlFragment, type Statement } from '../db/statement.ts';
import { tenantRows } from '../tenancy/scope.ts';
import { DOCUMENTS } from './statements.ts';
import type { Document } from './types.ts';

/** What one update statement is asked to do. */
export interface UpdatePlan {
  /** The tenant's rows of the collection that match the filter (`tenantRows`). */
  readonly matching: Knex.QueryBuilder;
  /** The collection's condition, which the write repeats beside the tenant's. */
  readonly inCollection: SqlFragment;
  readonly order: SqlFragment;
  /** 1 for updateOne and findOneAndUpdate; none for updateMany. */
  readonly limit: number | undefined;
  /** The operations, as `operationsJson` gives them. */
  readonly operations: string;
  /** The document to insert, before the update is applied to it, when nothing matches (upsert). */
  readonly upsert: { readonly collection: string; readonly document: Document } | undefined;
  /** Whether the answer carries the updated document, before and after (findOneAndUpdate). */
  readonly returnDocuments: boolean;
}

/** The answer of an update statement: one row. */
export interface UpdateOutcome {
  readonly matched: number;
  readonly modified: number;
  readonly before: Document | null;
  readonly after: Document | null;
  readonly upserted: Document | null;
}

/**
 * One statement that locks the matching rows, computes each new document from the row's
 * current version in PostgreSQL (`documents_apply_update`), writes only the rows that really
 * change, and, for an upsert, inserts the new document when no row matched. A concurrent writer
 * of the same row waits for the lock, then works from the version this one wrote, so no update
 * is lost; a row that no longer matches once the lock is granted is passed over for the next.
 */
export function updateStatement(tenant: string, plan: UpdatePlan): Statement {
  const matched = plan.matching.clone().select('id', 'doc').orderByRaw(plan.order.sql, plan.order.bindings).forUpdate();
  if (plan.limit !== undefined) matched.limit(plan.limit);
  // The new document is computed by the UPDATE itself, on the version it writes (the one
  // `matched` locked), and the rows are found by primary key from an array: a join with
  // `matched` was planned as a nested loop of sequential scans on a table not yet analysed
  // (20 000 rows took minutes).
  // `documents_updated`: the IMMUTABLE form, which Citus accepts over a column in an UPDATE.
  const applied = sql.raw('documents_updated(doc, ?::jsonb)', [plan.operations]);
  const writing = tenantRows(DOCUMENTS, tenant, plan.inCollection)
    .whereRaw('id = any(array(select id from matched))')
    .whereRaw('? <> doc', [applied])
    .update({ doc: applied })
    .returning('doc');
  const parts: Array<[string, unknown[]]> = [
    ['with matched as (?)', [matched]],
    ['updated as (?)', [writing]],
  ];
  if (plan.upsert !== undefined) parts.push(['inserted as (?)', [insertion(tenant, plan.upsert, plan.operations)]]);
  const before = plan.returnDocuments ? '(select doc from matched)' : 'null::jsonb';
  const after = plan.returnDocuments ? 'coalesce((select doc from updated), (select doc from matched))' : 'null::jsonb';
  const upserted = plan.upsert === undefined ? 'null::jsonb' : '(select doc from inserted)';
  const counts = '(select count(*) from matched)::int as matched, (select count(*) from updated)::int as modified';
  const text = `${parts.map(([part]) => part).join(', ')} select ${counts}, ${before} as before, ${after} as after, ${upserted} as upserted`;
  return statementOf(sql.raw(text, parts.flatMap(([, bindings]) => bindings) as Knex.RawBinding[]));
}

/**
 * The upserted row: the new document is the update applied to `document` (the filter's
 * equality fields and an `_id`), inserted only when no row matched. A concurrent insert of the
 * same `_id` (or any unique key) makes it insert nothing rather than fail: the caller then
 * runs the statement again, and finds that row to update.
 */
function insertion(tenant: string, { collection, document }: { collection: string; document: Document }, operations: string): Knex.Raw {
  return sql.raw(
    // The CASE, not only the WHERE, keeps the update from being applied to the new document
    // when a row matched: applied to the filter's fields it could be refused ($push to a string).
    "insert into ?? (tenant, collection, id, doc) select ?, ?, upserted.doc->>'_id', upserted.doc " +
      'from (select case when not exists (select from matched) then documents_apply_update(?::jsonb, ?::jsonb) end as doc) as upserted ' +
      'where upserted.doc is not null on conflict do nothing returning doc',
    [DOCUMENTS, tenant, collection, JSON.stringify(document), operations],
  );
}
