import { DocumentQueryError } from './errors.ts';
import { isPlainObject } from '../values/json.ts';

/**
 * (SPEC §17.3) PostgreSQL spends time on a statement's size before `statement_timeout` can act: 2 000 sort keys kept
 * a backend busy 7-27 s, deaf to cancellation; an `$and` of 20 000 planned in 3 s. Within these bounds the largest
 * query plans in milliseconds, and stays under 65 535 bound values (10 a condition, repeated at most 4 times).
 */
export const QUERY_BOUNDS = Object.freeze({
  sortKeys: 32,
  /** Conditions of one filter, counting each field condition, each operator and each `$and`/`$or`, at any depth. */
  filterConditions: 1000,
  /** Values of one `$in` or `$nin` list: it travels as one bound array, matched as a hashed set. */
  inValues: 100_000,
  /** Values of one `$each` (`$push`, `$addToSet`) or `$pull`'s `$in`. */
  eachValues: 10_000,
  /**
   * `$elemMatch` within `$elemMatch`: each level is a subquery over the one above, which PostgreSQL plans as a join
   * of them all; past 16 levels that planning grows steeply (20: a second, 50: past the statement limit).
   */
  elemMatchDepth: 8,
  projectionFields: 100,
  /**
   * Keys of one dotted path (MongoDB nests documents at most 100 deep). PostgreSQL walks a path recursively (20 000
   * keys: "stack depth limit exceeded"), and the update's conflict check compares every prefix of every path.
   */
  pathKeys: 100,
  /**
   * Levels of objects and arrays one within another in a value (a document, or a value in a filter or update; MongoDB
   * nests documents at most 100 deep). The store's checks and reads walk values recursively: a value some 3 000 levels
   * deep overflowed the stack in one of them or another, a RangeError instead of this error.
   */
  valueDepth: 100,
  /** Fields of one update, all its operators together (each is a step PostgreSQL applies to every matching document). */
  updateFields: 1000,
});

export type QueryBound = keyof typeof QUERY_BOUNDS;

const BOUND_NAMES: Record<QueryBound, string> = {
  sortKeys: 'sort keys',
  filterConditions: 'filter conditions',
  inValues: '$in values',
  eachValues: 'values of $each or $pull\'s $in',
  elemMatchDepth: '$elemMatch levels',
  projectionFields: 'projection fields',
  pathKeys: 'path keys',
  valueDepth: 'levels of nesting',
  updateFields: 'update fields',
};

export function checkBound(bound: QueryBound, size: number, where = BOUND_NAMES[bound]): void {
  const most = QUERY_BOUNDS[bound];
  if (size > most) throw new DocumentQueryError(`${where}: at most ${most} ${BOUND_NAMES[bound]} (bound ${bound}); this query has ${size}`);
}

const LOGICAL = new Set(['$and', '$or', '$nor']);
const LISTS = new Set(['$in', '$nin']);

/** Without recursion, so that a filter nested deeper than the stack is refused, not a crash. */
export function checkFilterBounds(filter: unknown): void {
  let conditions = 0;
  let deepest = 0;
  const pending: Array<{ part: unknown; depth: number }> = [{ part: filter, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { part, depth } = next;
    if (!isPlainObject(part)) continue;
    for (const [key, value] of Object.entries(part)) {
      if (LOGICAL.has(key)) {
        conditions += 1;
        if (Array.isArray(value)) for (const sub of value) pending.push({ part: sub, depth });
        continue;
      }
      // `$elemMatch` holds a filter of its own, one level deeper: its conditions count too. There a `$` key
      // (`{$elemMatch: {$in: […]}}`, `{$elemMatch: {$elemMatch: …}}` of an array of arrays) is an operator on the element.
      conditions += key.startsWith('$') ? operatorCondition(key, value, '$elemMatch') : fieldConditions(key, value);
      const inner = key === '$elemMatch' ? value : isPlainObject(value) ? value.$elemMatch : undefined;
      if (isPlainObject(inner)) {
        deepest = Math.max(deepest, depth + 1);
        pending.push({ part: inner, depth: depth + 1 });
      }
    }
  }
  checkBound('filterConditions', conditions, 'filter');
  checkBound('elemMatchDepth', deepest, 'filter');
}

function fieldConditions(key: string, value: unknown): number {
  if (!isPlainObject(value)) return 1;
  const operators = Object.keys(value).filter((name) => name.startsWith('$'));
  for (const operator of operators) operatorCondition(operator, value[operator], `"${key}"`);
  return Math.max(1, operators.length);
}

/** One operator is one condition; a `$in` or `$nin` list also has its bound. */
function operatorCondition(operator: string, operand: unknown, of: string): number {
  if (LISTS.has(operator) && Array.isArray(operand)) checkBound('inValues', operand.length, `${operator} of ${of}`);
  return 1;
}
