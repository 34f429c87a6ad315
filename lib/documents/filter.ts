import { DocumentQueryError } from './errors.ts';
import { jsonPathOf, parsePath, type FieldPath } from './paths.ts';
import type { Filter, SqlFragment } from './types.ts';
import { isPlainObject, isScalar, isStorable, jsonPathLiteral, toJsonValue, type JsonValue } from './values.ts';

/**
 * Compiles a MongoDB-style filter into a SQL condition on the `doc` (jsonb) and `id` columns.
 * Values and field paths travel only as bound parameters: field paths inside SQL/JSON path
 * text, which `doc @? path` evaluates and the GIN index (jsonb_path_ops) serves for equality.
 * Paths use SQL/JSON's lax mode, so as in MongoDB a scalar also matches inside an array.
 */
export function compileFilter(filter: unknown, collection: string): SqlFragment {
  if (filter === undefined) return TRUE;
  if (!isPlainObject(filter)) throw new DocumentQueryError('a filter must be a plain object');
  return all(Object.entries(filter).map(([key, value]) => compileEntry(key, value, collection)));
}

const TRUE: SqlFragment = { sql: 'true', bindings: [] };
const FALSE: SqlFragment = { sql: 'false', bindings: [] };

function compileEntry(key: string, value: unknown, collection: string): SqlFragment {
  if (key === '$and') return all(subFilters(key, value).map((filter) => compileFilter(filter, collection)));
  if (key === '$or') return any(subFilters(key, value).map((filter) => compileFilter(filter, collection)));
  const path = parsePath(key, 'filter');
  if (!isOperatorObject(value, key)) return equals(path, value, collection);
  return all(Object.entries(value).map(([operator, operand]) => compileOperator(path, operator, operand, collection)));
}

function subFilters(operator: string, value: unknown): Filter[] {
  if (!Array.isArray(value) || value.length === 0) throw new DocumentQueryError(`${operator} needs a non-empty array of filters`);
  return value as Filter[];
}

/** `{$gt: 1}` is an operator object; `{a: 1}` is a value to compare whole; a mix is an error. */
function isOperatorObject(value: unknown, key: string): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  const operators = keys.filter((name) => name.startsWith('$')).length;
  if (operators > 0 && operators < keys.length) throw new DocumentQueryError(`filter on "${key}" mixes operators and fields`);
  return operators > 0;
}

function compileOperator(path: FieldPath, operator: string, operand: unknown, collection: string): SqlFragment {
  switch (operator) {
    case '$eq':
      return equals(path, operand, collection);
    case '$ne':
      return not(equals(path, operand, collection));
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return compare(path, operator, operand);
    case '$in':
      return any(inList(operator, operand).map((value) => equals(path, value, collection)));
    case '$nin':
      return not(any(inList(operator, operand).map((value) => equals(path, value, collection))));
    case '$exists':
      return operand ? exists(path) : not(exists(path));
    default:
      throw new DocumentQueryError(`unknown operator "${operator}"`);
  }
}

function inList(operator: string, operand: unknown): unknown[] {
  if (!Array.isArray(operand)) throw new DocumentQueryError(`${operator} needs an array`);
  return operand;
}

const COMPARISONS = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/** Ordered comparison within one type, as MongoDB does: a number never compares with a string. */
function compare(path: FieldPath, operator: keyof typeof COMPARISONS, operand: unknown): SqlFragment {
  const value = toJsonValue(operand, operator);
  if (!isScalar(value)) throw new DocumentQueryError(`${operator} needs a number, string, boolean or date`);
  if (!isStorable(value)) throw new DocumentQueryError(`${operator}: text with NUL (\\u0000) or an unpaired surrogate cannot be compared`);
  return pathMatches(`${jsonPathOf(path)} ? (@ ${COMPARISONS[operator]} ${jsonPathLiteral(value)})`);
}

function equals(path: FieldPath, operand: unknown, collection: string): SqlFragment {
  const value = toJsonValue(operand, 'filter');
  // No stored document can hold such text (see toStorableValue), so nothing equals it.
  if (!isStorable(value)) return FALSE;
  if (path.length === 1 && path[0] === '_id') return idEquals(value);
  if (value === null) return any([not(exists(path)), pathMatches(`${jsonPathOf(path)} ? (@ == null)`)]);
  if (!isScalar(value)) return structureEquals(path, value);
  if (isAccountUsername(collection, path, value)) return usernameIndexed(value);
  return pathMatches(`${jsonPathOf(path)} ? (@ == ${jsonPathLiteral(value)})`);
}

/** `_id` is also the `id` column, so an `_id` lookup uses the primary key. */
function idEquals(value: JsonValue): SqlFragment {
  return typeof value === 'string' ? { sql: 'id = ?', bindings: [value] } : FALSE;
}

function isAccountUsername(collection: string, path: FieldPath, value: JsonValue): value is string {
  return collection === 'accounts' && path.length === 1 && path[0] === 'username' && typeof value === 'string';
}

/**
 * Uses the unique `(tenant, account_username)` index of accounts alone. `account_username` is a
 * stored copy of `doc->>'username'` (see its migration): row-level security lets PostgreSQL use
 * an index only for leakproof comparisons, and `=` on a plain text column is one, where
 * `doc->>'username'` is not. The type check keeps the meaning of the path match it replaces (a
 * number 5 must not equal "5"). The SQL text is fixed; only the value is bound.
 */
function usernameIndexed(username: string): SqlFragment {
  return { sql: "account_username = ? and jsonb_typeof(doc->'username') = 'string'", bindings: [username] };
}

/** An object or array compared whole (key order aside), or found as an element of an array. */
function structureEquals(path: FieldPath, value: JsonValue): SqlFragment {
  const json = JSON.stringify(value);
  const keys = [...path];
  return {
    sql:
      '(doc #> ?::text[] = ?::jsonb or ?::jsonb in (select jsonb_array_elements(case jsonb_typeof(doc #> ?::text[]) ' +
      "when 'array' then doc #> ?::text[] else '[]'::jsonb end)))",
    bindings: [keys, json, json, keys, keys],
  };
}

function exists(path: FieldPath): SqlFragment {
  if (path.length === 1 && path[0] === '_id') return TRUE;
  return pathMatches(jsonPathOf(path));
}

function pathMatches(jsonPath: string): SqlFragment {
  return { sql: 'doc @\\? ?::jsonpath', bindings: [jsonPath] };
}

function all(parts: SqlFragment[]): SqlFragment {
  return join(parts, ' and ', TRUE);
}

function any(parts: SqlFragment[]): SqlFragment {
  return join(parts, ' or ', FALSE);
}

function join(parts: SqlFragment[], separator: string, empty: SqlFragment): SqlFragment {
  if (parts.length === 0) return empty;
  if (parts.length === 1) return parts[0] as SqlFragment;
  return { sql: parts.map((part) => `(${part.sql})`).join(separator), bindings: parts.flatMap((part) => part.bindings) };
}

/** Negation where a missing path counts as "no match", never as SQL's unknown. */
function not(part: SqlFragment): SqlFragment {
  return { sql: `not coalesce((${part.sql}), false)`, bindings: part.bindings };
}
