import type { Knex } from 'knex';
import { sql, statementOf } from './statement.ts';
import type { TransactionStatement } from './tenant-database.ts';

/**
 * The latest time in a history (a space's events, an account's: `history` selects the same
 * subject's rows), read in the change's transaction, which holds the subject's row lock. Read
 * apart from the insert, not as its subquery: Citus refuses subqueries in an `INSERT` (SPEC §15.4).
 */
export async function latestEventTime(run: TransactionStatement, history: Knex.QueryBuilder): Promise<string | null> {
  const { rows } = await run(statementOf(history.select(sql.raw('max(at)::text as latest'))));
  return (rows[0] as { latest: string | null } | undefined)?.latest ?? null;
}

/**
 * The time of a new event: the clock's, in milliseconds, and after `latest` (`latestEventTime`),
 * so that one subject's events are strictly ordered and paging by time never skips one.
 */
export function eventTimeAfter(latest: string | null): Knex.Raw {
  return sql.raw("greatest(date_trunc('milliseconds', clock_timestamp()), ?::timestamptz + interval '1 millisecond')", [latest]);
}
