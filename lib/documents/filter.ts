import { DocumentQueryError } from './errors.ts';
import { jsonPathOf, parsePath, WHOLE_DOCUMENT, type FieldPath } from './paths.ts';
import type { DeclaredPaths, Filter, SqlFragment } from './types.ts';
import { isPlainObject, type Json } from '../values/json.ts';
import { isStorable } from '../values/storable-text.ts';
import { isScalar, jsonPathLiteral, toJsonValue, type Scalar } from './values.ts';
import { regexMatches } from './regex.ts';
import { TEXT_COLUMN } from './statements.ts';

/**
 * Compiles a MongoDB-style filter into a SQL condition on the `doc` (jsonb) and `id` columns.
 * Values and field paths travel only as bound parameters: field paths inside SQL/JSON path
 * text, which `doc @? path` evaluates and the GIN index (jsonb_path_ops) serves for equality.
 * Paths use SQL/JSON's lax mode, so as in MongoDB a scalar also matches inside an array.
 * Conditions on a path the project declared an index on are written by `declared` instead.
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
  // MongoDB's shorthand for `{$regex: /.../}`.
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

/**
 * `$in`: equality with any of `operands`, in a fixed number of bound values however long the
 * list (a statement takes at most 65 535): the values of each kind travel as one array.
 */
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

/**
 * The elements of an array `$elemMatch` looks into are filtered as documents of their own: the
 * sub-filter's SQL names its document `doc`, which in there is the element. Their `_id` is a
 * field like any other, not the row's `id`.
 */
const IN_ELEMENT = '$element';

/** The document's `_id`, which is also the `id` column. */
function isIdPath(path: FieldPath, collection: string): boolean {
  return collection !== IN_ELEMENT && path.length === 1 && path[0] === '_id';
}

/**
 * `$elemMatch`: one element of the array at `path` meets every condition of `operand`, which are
 * fields of an object element (`{sku: 'a', qty: {$gt: 1}}`) or operators on the element itself
 * (`{$gt: 1, $lt: 5}`). A value that is not an array never matches.
 */
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
  return typeof value === 'string' ? { sql: 'id = ?', bindings: [value] } : FALSE;
}

function idEqualsAnyOf(ids: Json[]): SqlFragment {
  return ids.length === 0 ? FALSE : { sql: 'id = any(?::text[])', bindings: [ids as string[]] };
}

function isTextColumn(collection: string, path: FieldPath, value: Json): value is string {
  return collection === TEXT_COLUMN.collection && path.length === 1 && path[0] === TEXT_COLUMN.path && typeof value === 'string';
}

/**
 * Equality on the path the table keeps in `TEXT_COLUMN`, written on that column alone so that its
 * unique index serves it under row-level security. The type check keeps the meaning of the path
 * match it replaces (a number 5 must not equal "5"). The SQL text is fixed; only the value is bound.
 */
function textColumnEquals(text: string | string[]): SqlFragment {
  const { column, path } = TEXT_COLUMN;
  const comparison = typeof text === 'string' ? `${column} = ?` : `${column} = any(?::text[])`;
  return { sql: `${comparison} and jsonb_typeof(doc->'${path}') = 'string'`, bindings: [text] };
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

/** `structureEquals` for any of `values`, given as one JSON array. */
function structureEqualsAny(path: FieldPath, values: Json[]): SqlFragment {
  const keys = [...path];
  return {
    sql:
      '(doc #> ?::text[] in (select jsonb_array_elements(?::jsonb)) or exists (select from jsonb_array_elements(case jsonb_typeof(doc #> ?::text[]) ' +
      "when 'array' then doc #> ?::text[] else '[]'::jsonb end) as element where element in (select jsonb_array_elements(?::jsonb))))",
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

/**
 * Longer `$in` lists than this are matched as a set instead of path by path: the GIN index
 * serves each value of a short list, but every candidate row is then checked against every
 * path, which for 70 000 values took longer than the statement time limit.
 */
const INDEXED_IN_LIST = 100;

/**
 * Equality with any of `values` (scalars), as `equals` has it for each. A short list is one
 * bound array of SQL/JSON paths that the GIN index serves; a long one compares the scalars a
 * path match would compare (`[*][*]`: the two levels of arrays lax mode unwraps, one for the
 * filter and one for the comparison) with the values as one hashed set.
 */
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

/** The conditions ANDed, each parenthesised; none: true. */
export function all(parts: SqlFragment[]): SqlFragment {
  return join(parts, ' and ', TRUE);
}

/** The conditions ORed, each parenthesised; none: false. */
export function any(parts: SqlFragment[]): SqlFragment {
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
