import type { Knex } from 'knex';
import { sql, statementOf, type SqlFragment, type Statement } from '../db/statement.ts';
import { tenantRows } from '../tenancy/scope.ts';
import { DOCUMENTS } from './statements.ts';
import type { Document } from './types.ts';

export interface UpdatePlan {
  readonly matching: Knex.QueryBuilder;
  readonly inCollection: SqlFragment;
  readonly order: SqlFragment;
  readonly limit: number | undefined;
  readonly operations: string;
  readonly upsert: { readonly collection: string; readonly document: Document } | undefined;
  readonly returnDocuments: boolean;
}

export interface UpdateOutcome {
  readonly matched: number;
  readonly modified: number;
  readonly before: Document | null;
  readonly after: Document | null;
  readonly upserted: Document | null;
}

/**
 * One statement that locks the matching rows and computes each new document from the row's current version in
 * PostgreSQL: a concurrent writer waits for the lock, then works from this one's version, so no update is lost.
 */
export function updateStatement(tenant: string, plan: UpdatePlan): Statement {
  const matched = plan.matching.clone().select('id', 'doc').orderByRaw(plan.order.sql, plan.order.bindings).forUpdate();
  if (plan.limit !== undefined) matched.limit(plan.limit);
  // Rows found by primary key from an array: a join with `matched` was planned as a nested loop of
  // sequential scans on a table not yet analysed (20 000 rows took minutes).
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

/** Inserted only when no row matched; a concurrent insert of the same unique key makes it insert nothing, and the caller runs again. */
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
