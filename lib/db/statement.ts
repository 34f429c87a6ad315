import { isDeepStrictEqual } from 'node:util';
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
const silent = () => {};
export const sql: Knex = knexFactory({ client: 'pg', log: { warn: silent, error: silent, deprecate: silent, debug: silent } });

/** The statement a knex builder stands for, ready for `pg`. */
export function statementOf(builder: Knex.QueryBuilder | Knex.Raw): Statement {
  const { sql: text, bindings } = builder.toSQL().toNative();
  return { sql: text, bindings };
}

/**
 * Statements of one shape share their SQL text: knex builds a shape's statement once, and later
 * statements of that shape reuse its text with their own values (building cost a sixth of a
 * document query). The caller names the shape (everything that decides the text) and lists the
 * values in the order the text binds them; a shape is kept only if that list matched knex's
 * own on the first build, so a wrong list costs speed, never a wrong statement.
 */
export class StatementShapes {
  readonly #texts = new Map<string, string>();
  readonly #capacity: number;

  constructor(capacity = 1000) {
    this.#capacity = capacity;
  }

  statement(shape: string, bindings: readonly unknown[], build: () => Knex.QueryBuilder): Statement {
    const text = this.#texts.get(shape);
    if (text !== undefined) return { sql: text, bindings };
    const built = statementOf(build());
    if (isDeepStrictEqual(built.bindings, bindings)) {
      if (this.#texts.size >= this.#capacity) this.#texts.clear();
      this.#texts.set(shape, built.sql);
    }
    return built;
  }
}
