import { checkBound } from './bounds.ts';
import { DocumentQueryError } from './errors.ts';
import { parsePath } from './paths.ts';
import type { DeclaredPaths, SqlFragment } from './types.ts';
import { isPlainObject } from '../values/json.ts';

const DIRECTIONS = new Map<unknown, 'asc' | 'desc'>([
  [1, 'asc'], ['asc', 'asc'], ['ascending', 'asc'],
  [-1, 'desc'], ['desc', 'desc'], ['descending', 'desc'],
]);

/** MongoDB's order: by type (missing and null, numbers, strings, objects, arrays, booleans), then value; `id` keeps pages stable. */
export function compileSort(spec: unknown, declared?: DeclaredPaths): SqlFragment {
  if (spec === undefined) return { sql: 'id', bindings: [] };
  if (!isPlainObject(spec)) throw new DocumentQueryError('a sort must be a plain object such as {field: 1}');
  checkBound('sortKeys', Object.keys(spec).length, 'sort');
  const terms = Object.entries(spec).map(([name, direction]) => sortTerm(parsePath(name, 'sort'), name, direction, declared));
  return { sql: [...terms.map((term) => term.sql), 'id'].join(', '), bindings: terms.flatMap((term) => term.bindings) };
}

function sortTerm(path: readonly string[], name: string, given: unknown, declared: DeclaredPaths | undefined): SqlFragment {
  const direction = DIRECTIONS.get(given);
  if (direction === undefined) throw new DocumentQueryError(`sort direction of "${name}" must be 1 or -1`);
  const indexed = declared?.sortTerm(path, direction);
  if (indexed !== undefined) return indexed;
  const value = 'doc #> ?::text[]';
  const keys = [...path];
  const sql = [
    `coalesce(case jsonb_typeof(${value}) when 'number' then 2 when 'string' then 3 when 'object' then 4 when 'array' then 5 when 'boolean' then 6 end, 1) ${direction}`,
    `case when jsonb_typeof(${value}) = 'number' then (${value})::numeric end ${direction}`,
    `case when jsonb_typeof(${value}) = 'string' then (${value}) #>> '{}' end collate "C" ${direction}`,
    `case when jsonb_typeof(${value}) in ('object', 'array', 'boolean') then ${value} end ${direction}`,
  ].join(', ');
  return { sql, bindings: Array.from({ length: sql.split(value).length - 1 }, () => keys) };
}
