import { DocumentQueryError } from './errors.ts';
import { isPlainObject } from '../values/json.ts';

/**
 * The bounds of a query's shape (SPEC §17.3). PostgreSQL spends time on a statement's size
 * before its `statement_timeout` can act: analysing a sort compares each of its terms with
 * every earlier one (2 000 keys kept a backend busy for 7-27 s, deaf to cancellation), and
 * planning a filter grows with its conditions (`$and` of 20 000: 3 s). Within these bounds the
 * largest query is analysed and planned in milliseconds, so the statement limit holds. They
 * also keep a statement under PostgreSQL's 65 535 bound values: a condition binds at most 10
 * (a `$in` of every kind of value), and a read split on a declared index repeats it at most 4
 * times.
 */
export const QUERY_BOUNDS = Object.freeze({
  /** Keys of one sort, as MongoDB allows. */
  sortKeys: 32,
  /** Conditions of one filter, counting each field condition, each operator and each `$and`/`$or`, at any depth. */
  filterConditions: 1000,
  /** Values of one `$in` or `$nin` list: it travels as one bound array, matched as a hashed set. */
  inValues: 100_000,
  /** Values of one `$each` (`$push`, `$addToSet`) or `$pull`'s `$in`. */
  eachValues: 10_000,
  /** Fields of one projection. */
  projectionFields: 100,
  /** Fields of one update, all its operators together (each is a step PostgreSQL applies to every matching document). */
  updateFields: 1000,
});

export type QueryBound = keyof typeof QUERY_BOUNDS;

const BOUND_NAMES: Record<QueryBound, string> = {
  sortKeys: 'sort keys',
  filterConditions: 'filter conditions',
  inValues: '$in values',
  eachValues: 'values of $each or $pull\'s $in',
  projectionFields: 'projection fields',
  updateFields: 'update fields',
};

/** Refuses `size` over the bound, naming the bound, what was over it, and where. */
export function checkBound(bound: QueryBound, size: number, where = BOUND_NAMES[bound]): void {
  const most = QUERY_BOUNDS[bound];
  if (size > most) throw new DocumentQueryError(`${where}: at most ${most} ${BOUND_NAMES[bound]} (bound ${bound}); this query has ${size}`);
}

const LOGICAL = new Set(['$and', '$or', '$nor']);
const LISTS = new Set(['$in', '$nin']);

/**
 * Checks a filter against its bounds before it is compiled, walking it without recursion so
 * that a filter nested deeper than the stack is refused too, not a crash.
 */
export function checkFilterBounds(filter: unknown): void {
  let conditions = 0;
  const pending: unknown[] = [filter];
  while (pending.length > 0) {
    const part = pending.pop();
    if (!isPlainObject(part)) continue;
    for (const [key, value] of Object.entries(part)) {
      if (LOGICAL.has(key)) {
        conditions += 1;
        if (Array.isArray(value)) for (const sub of value) pending.push(sub);
      } else {
        conditions += fieldConditions(key, value);
        // `$elemMatch` holds a filter of its own: its conditions count too, at any depth.
        if (isPlainObject(value) && isPlainObject(value.$elemMatch)) pending.push(value.$elemMatch);
      }
    }
  }
  checkBound('filterConditions', conditions, 'filter');
}

/** The conditions of one field's entry: each operator, or one equality; a `$in` list is checked here. */
function fieldConditions(key: string, value: unknown): number {
  if (!isPlainObject(value)) return 1;
  const operators = Object.keys(value).filter((name) => name.startsWith('$'));
  for (const operator of operators) {
    const list = value[operator];
    if (LISTS.has(operator) && Array.isArray(list)) checkBound('inValues', list.length, `${operator} of "${key}"`);
  }
  return Math.max(1, operators.length);
}
