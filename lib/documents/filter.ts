import { DocumentQueryError } from './errors.ts';
import { jsonPathOf, parsePath, WHOLE_DOCUMENT, type FieldPath } from './paths.ts';
import type { DeclaredPaths, Filter, SqlFragment } from './types.ts';
import { isPlainObject, type Json } from '../values/json.ts';
import { isStorable } from '../values/storable-text.ts';
import { isScalar, jsonPathLiteral, toJsonValue, type Scalar } from './values.ts';
import { regexMatches } from './regex.ts';
import { TEXT_COLUMN } from './statements.ts';

/**
 * A MongoDB-style filter as a SQL condition. Values and paths travel only as bound parameters (paths inside SQL/JSON
 * path text, which `doc @? path` evaluates and the GIN index serves); lax mode matches a scalar inside an array too.
 */
export function compileFilter(filter: unknown, collection: string, declared?: DeclaredPaths): SqlFragment {
  const conditions = (part: unknown) => compileConditions(part, collection);
  return declared === undefined ? conditions(filter) : declared.compileFilter(filter, conditions);
}

function compileConditions(filter: unknown, collection: string): SqlFragment {
  if (filter === undefined) return TRUE;
  if (!isPlainObject(filter)) throw new DocumentQueryError('a filter must be a plain object');
  return all(Object.entries(filter).map(([key, value]) => compileEntry(key, value, collection)));
}

const TRUE: SqlFragment = { sql: 'true', bindings: [] };
const FALSE: SqlFragment = { sql: 'false', bindings: [] };

function compileEntry(key: string, value: unknown, collection: string): SqlFragment {
  if (key === '$and') return all(subFilters(key, value).map((filter) => compileConditions(filter, collection)));
  if (key === '$or') return any(subFilters(key, value).map((filter) => compileConditions(filter, collection)));
  const path = parsePath(key, 'filter');
  if (value instanceof RegExp) return regexMatches(path, value, undefined);
  if (!isOperatorObject(value, key)) return equals(path, value, collection);
  return all(Object.entries(value).map(([operator, operand]) => compileOperator(path, operator, operand, collection, value)));
}

function subFilters(operator: string, value: unknown): Filter[] {
  if (!Array.isArray(value) || value.length === 0) throw new DocumentQueryError(`${operator} needs a non-empty array of filters`);
  return value as Filter[];
}

/** `{$gt: 1}` is an operator object; `{a: 1}` is a value to compare whole; a mix is an error. */
export function isOperatorObject(value: unknown, key: string): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  const operators = keys.filter((name) => name.startsWith('$')).length;
  if (operators > 0 && operators < keys.length) throw new DocumentQueryError(`filter on "${key}" mixes operators and fields`);
  return operators > 0;
}

function compileOperator(path: FieldPath, operator: string, operand: unknown, collection: string, siblings: Record<string, unknown>): SqlFragment {
  switch (operator) {
    case '$regex':
      return regexMatches(path, operand, siblings.$options);
    case '$options':
      if (!Object.hasOwn(siblings, '$regex')) throw new DocumentQueryError('$options needs a $regex beside it');
      return TRUE;
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
      return equalsAnyOf(path, inList(operator, operand), collection);
    case '$nin':
      return not(equalsAnyOf(path, inList(operator, operand), collection));
    case '$exists':
      return operand ? exists(path, collection) : not(exists(path, collection));
    case '$elemMatch':
      return elementMatches(path, operand);
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
  if (isIdPath(path, collection)) return idEquals(value);
  if (value === null) return any([not(exists(path, collection)), pathMatches(`${jsonPathOf(path)} ? (@ == null)`)]);
  if (!isScalar(value)) return structureEquals(path, value);
  if (isTextColumn(collection, path, value)) return textColumnEquals(value);
  return pathMatches(`${jsonPathOf(path)} ? (@ == ${jsonPathLiteral(value)})`);
}

/** `$in`: each kind of value travels as one bound array, so the count of bound values is fixed (a statement takes 65 535). */
function equalsAnyOf(path: FieldPath, operands: unknown[], collection: string): SqlFragment {
  const values = operands.map((operand) => toJsonValue(operand, 'filter')).filter(isStorable);
  if (isIdPath(path, collection)) return idEqualsAnyOf(values.filter((value) => typeof value === 'string'));
  const texts: string[] = [];
  const scalars: Scalar[] = [];
  const structures: Json[] = [];
  for (const value of values) {
    if (isTextColumn(collection, path, value)) texts.push(value);
    else if (value !== null) (isScalar(value) ? scalars : structures).push(value);
  }
  return any([
    ...(texts.length > 0 ? [textColumnEquals(texts)] : []),
    ...(scalars.length > 0 ? [scalarEqualsAny(path, scalars)] : []),
    ...(values.includes(null) ? [equals(path, null, collection)] : []),
    ...(structures.length > 0 ? [structureEqualsAny(path, structures)] : []),
  ]);
}

/** `$elemMatch` filters an array's elements as documents named `doc`; their `_id` is a field, not the row's `id`. */
const IN_ELEMENT = '$element';

function isIdPath(path: FieldPath, collection: string): boolean {
  return collection !== IN_ELEMENT && path.length === 1 && path[0] === '_id';
}

/** Conditions on an object element's fields (`{sku: 'a'}`) or operators on the element (`{$gt: 1}`); a non-array never matches. */
function elementMatches(path: FieldPath, operand: unknown): SqlFragment {
  if (!isPlainObject(operand) || Object.keys(operand).length === 0) throw new DocumentQueryError('$elemMatch needs a non-empty object of conditions');
  const onElement = Object.keys(operand).every((key) => key.startsWith('$') && key !== '$and' && key !== '$or');
  const condition = onElement
    ? all(Object.entries(operand).map(([operator, value]) => compileOperator(WHOLE_DOCUMENT, operator, value, IN_ELEMENT, operand)))
    : compileConditions(operand, IN_ELEMENT);
  const keys = [...path];
  return {
    sql: `exists (select from jsonb_array_elements(case jsonb_typeof(doc #> ?::text[]) when 'array' then doc #> ?::text[] else '[]'::jsonb end) as element(doc) where ${condition.sql})`,
    bindings: [keys, keys, ...condition.bindings],
  };
}

/** `_id` is also the `id` column, so an `_id` lookup uses the primary key. */
function idEquals(value: Json): SqlFragment {
  return typeof value === 'string' ? { sql: 'id = ?', bindings: [value], byUniqueKey: true } : FALSE;
}

function idEqualsAnyOf(ids: Json[]): SqlFragment {
  return ids.length === 0 ? FALSE : { sql: 'id = any(?::text[])', bindings: [ids as string[]] };
}

function isTextColumn(collection: string, path: FieldPath, value: Json): value is string {
  return collection === TEXT_COLUMN.collection && path.length === 1 && path[0] === TEXT_COLUMN.path && typeof value === 'string';
}

/** On the `TEXT_COLUMN` alone, so its unique index serves it under row-level security; the type check keeps 5 from equalling "5". */
function textColumnEquals(text: string | string[]): SqlFragment {
  const { column, path } = TEXT_COLUMN;
  const sql = `${typeof text === 'string' ? `${column} = ?` : `${column} = any(?::text[])`} and jsonb_typeof(doc->'${path}') = 'string'`;
  return typeof text === 'string' ? { sql, bindings: [text], byUniqueKey: true } : { sql, bindings: [text] };
}

/** An object or array compared whole (key order aside), or found as an element of an array. */
function structureEquals(path: FieldPath, value: Json): SqlFragment {
  const json = JSON.stringify(value);
  const keys = [...path];
  return {
    sql:
      '(doc #> ?::text[] = ?::jsonb or ?::jsonb in (select jsonb_array_elements(case jsonb_typeof(doc #> ?::text[]) ' +
      "when 'array' then doc #> ?::text[] else '[]'::jsonb end)))",
    bindings: [keys, json, json, keys, keys],
  };
}

/**
 * `structureEquals` for any of `values`, given as one JSON array and hashed once per statement. `is true` keeps the
 * elements' `in` a hashed subplan: as a bare condition PostgreSQL made it a join, nested per document (100 000 values
 * over 1 000 documents outlasted the statement limit).
 */
function structureEqualsAny(path: FieldPath, values: Json[]): SqlFragment {
  const keys = [...path];
  return {
    sql:
      '(doc #> ?::text[] in (select jsonb_array_elements(?::jsonb)) or exists (select from jsonb_array_elements(case jsonb_typeof(doc #> ?::text[]) ' +
      "when 'array' then doc #> ?::text[] else '[]'::jsonb end) as element where (element in (select jsonb_array_elements(?::jsonb))) is true))",
    bindings: [keys, JSON.stringify(values), keys, keys, JSON.stringify(values)],
  };
}

function exists(path: FieldPath, collection: string): SqlFragment {
  if (isIdPath(path, collection)) return TRUE;
  return pathMatches(jsonPathOf(path));
}

function pathMatches(jsonPath: string): SqlFragment {
  return { sql: 'doc @\\? ?::jsonpath', bindings: [jsonPath] };
}

/** Longer `$in` lists are matched as a hashed set: path by path, each candidate row is checked against every path (70 000 values outlasted the statement limit). */
const INDEXED_IN_LIST = 100;

/** A long list compares the scalars a path match would (`[*][*]`: the two array levels lax mode unwraps) with one hashed set. */
function scalarEqualsAny(path: FieldPath, values: Scalar[]): SqlFragment {
  if (values.length <= INDEXED_IN_LIST) {
    const target = jsonPathOf(path);
    const matches = values.map((value) => `${target} ? (@ == ${jsonPathLiteral(value)})`);
    return matches.length === 1 ? pathMatches(matches[0] as string) : { sql: 'doc @\\? any(?::jsonpath[])', bindings: [matches] };
  }
  return {
    sql: 'exists (select from jsonb_path_query(doc, ?::jsonpath) as found where found in (select jsonb_array_elements(?::jsonb)))',
    bindings: [`${jsonPathOf(path)}[*][*]`, JSON.stringify(values)],
  };
}

export function all(parts: SqlFragment[]): SqlFragment {
  return join(parts, ' and ', TRUE);
}

export function any(parts: SqlFragment[]): SqlFragment {
  return join(parts, ' or ', FALSE);
}

function join(parts: SqlFragment[], separator: ' and ' | ' or ', empty: SqlFragment): SqlFragment {
  if (parts.length === 0) return empty;
  if (parts.length === 1) return parts[0] as SqlFragment;
  const sql = parts.map((part) => `(${part.sql})`).join(separator);
  const bindings = parts.flatMap((part) => part.bindings);
  return separator === ' and ' && parts.some((part) => part.byUniqueKey === true) ? { sql, bindings, byUniqueKey: true } : { sql, bindings };
}

/** Negation where a missing path counts as "no match", never as SQL's unknown. */
function not(part: SqlFragment): SqlFragment {
  return { sql: `not coalesce((${part.sql}), false)`, bindings: part.bindings };
}
