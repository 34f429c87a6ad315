import { isDeepStrictEqual } from 'node:util';
import knexFactory, { type Knex } from 'knex';

/** A piece of SQL with `?` placeholders and the values bound to them, in order. */
export interface SqlFragment {
  sql: string;
  bindings: SqlBinding[];
  /** Equality on a unique key: a conjunction holding it finds one row at most, by the same plan whatever the values. */
  byUniqueKey?: boolean;
}

export type SqlBinding = string | number | boolean | null | string[];

/** A whole statement as PostgreSQL receives it: `$n` placeholders and their values. */
export interface Statement {
  readonly sql: string;
  readonly bindings: readonly unknown[];
  /**
   * A read by a unique key, whose best plan is the same for every value: prepared, it is planned
   * once per connection and that plan kept. Other reads are planned for their values each time.
   */
  readonly planOnce?: boolean;
}

/** knex as a query builder only: statements run on `TenantDatabase`'s pool, which owns role and tenant. */
const silent = () => {};
export const sql: Knex = knexFactory({ client: 'pg', log: { warn: silent, error: silent, deprecate: silent, debug: silent } });

export function statementOf(builder: Knex.QueryBuilder | Knex.Raw): Statement {
  const { sql: text, bindings } = builder.toSQL().toNative();
  return { sql: text, bindings };
}

/**
 * knex builds a shape's text once (building cost a sixth of a document query). A shape is kept only if the caller's
 * bindings matched knex's on the first build, so a wrong list costs speed, never a wrong statement.
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
