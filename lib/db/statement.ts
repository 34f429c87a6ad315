import knexFactory, { type Knex } from 'knex';

/** A piece of SQL with `?` placeholders and the values bound to them, in order. */
export interface SqlFragment {
  sql: string;
  bindings: SqlBinding[];
}

export type SqlBinding = string | number | boolean | null | string[];

/** A whole statement as PostgreSQL receives it: `$n` placeholders and their values. */
export interface Statement {
  readonly sql: string;
  readonly bindings: readonly unknown[];
}

/**
 * knex as a query builder only: it writes the SQL and collects the bindings; the statement then
 * runs on the pool that owns the connection's role and tenant (`TenantDatabase`). It holds no
 * connection of its own.
 */
export const sql: Knex = knexFactory({ client: 'pg' });

/** The statement a knex builder stands for, ready for `pg`. */
export function statementOf(builder: Knex.QueryBuilder | Knex.Raw): Statement {
  const { sql: text, bindings } = builder.toSQL().toNative();
  return { sql: text, bindings };
}
