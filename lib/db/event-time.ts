import type { Knex } from 'knex';
import { sql, statementOf } from './statement.ts';
import type { TransactionStatement } from './tenant-database.ts';

/** Read in the change's transaction (it holds the subject's lock), apart from the insert: Citus refuses subqueries in an `INSERT` (SPEC §15.4). */
export async function latestEventTime(run: TransactionStatement, history: Knex.QueryBuilder): Promise<string | null> {
  const { rows } = await run(statementOf(history.select(sql.raw('max(at)::text as latest'))));
  return (rows[0] as { latest: string | null } | undefined)?.latest ?? null;
}

/** After `latest`, so one subject's events are strictly ordered and paging by time never skips one. */
export function eventTimeAfter(latest: string | null): Knex.Raw {
  return sql.raw("greatest(date_trunc('milliseconds', clock_timestamp()), ?::timestamptz + interval '1 millisecond')", [latest]);
}
