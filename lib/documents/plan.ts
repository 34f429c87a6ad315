import type { Statement } from '../db/statement.ts';

/** How PostgreSQL would run a find: its plan (EXPLAIN, FORMAT JSON), and the indexes that plan reads. */
export interface FindPlan {
  /** Every index the plan reads, in the plan's order: a declared index by its name. */
  readonly indexes: readonly string[];
  /** PostgreSQL's plan, as `EXPLAIN (FORMAT JSON)` gives it: `{ Plan: { 'Node Type', ... } }`. */
  readonly plan: unknown;
}

export function explainStatement(statement: Statement): Statement {
  return { sql: `explain (format json) ${statement.sql}`, bindings: statement.bindings };
}

export function findPlan(rows: ReadonlyArray<Record<string, unknown>>): FindPlan {
  const [explained] = (rows[0]?.['QUERY PLAN'] ?? []) as unknown[];
  const indexes: string[] = [];
  collectIndexNames(explained, indexes);
  return { indexes: [...new Set(indexes)], plan: explained };
}

function collectIndexNames(node: unknown, into: string[]): void {
  if (Array.isArray(node)) {
    for (const each of node) collectIndexNames(each, into);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'Index Name' && typeof value === 'string') into.push(value);
    else collectIndexNames(value, into);
  }
}
