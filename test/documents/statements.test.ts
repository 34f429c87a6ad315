import test from 'ava';
import fc from 'fast-check';
import { sql, StatementShapes } from '../../lib/db/statement.ts';
import { compileFilter } from '../../lib/documents/filter.ts';
import { isStorable } from '../../lib/values/storable-text.ts';
import { compileSort } from '../../lib/documents/sort.ts';
import { countStatement, selectStatement } from '../../lib/documents/statements.ts';
import { filterOf, findOptions } from '../helpers/filters.ts';

/** The same filter with every value changed, its shape kept: what a later request of one shape sends. */
function otherValues(value: unknown): unknown {
  if (typeof value === 'string') return `${value}~`;
  if (typeof value === 'number') return value + 1;
  if (Array.isArray(value)) return value.map(otherValues);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, otherValues(each)]));
  return value;
}

const inCollection = (name: string) => ({ sql: 'collection = ?', bindings: [name] });

// Invariant: whatever read a collection makes, the statement it sends from a remembered shape is
// exactly the statement knex builds for that read afresh, text and values alike.
const readsAlike = fc.asyncProperty(filterOf(4), filterOf(4), findOptions, findOptions, fc.boolean(), async (first, second, options, laterOptions, withOtherValues) => {
  const shapes = new StatementShapes();
  const later = withOtherValues ? (otherValues(first) as Record<string, unknown>) : second;
  const read = (filter: Record<string, unknown>, tenant: string, collection: string, remembered: StatementShapes, { sort, skip, limit } = options) => {
    let where: ReturnType<typeof compileFilter>;
    let order: ReturnType<typeof compileSort>;
    try {
      where = compileFilter(filter, collection);
      order = compileSort(sort);
    } catch {
      return undefined;
    }
    const conditions = [inCollection(collection), where];
    return [selectStatement(tenant, conditions, { order, skip, limit }, remembered), countStatement(tenant, conditions, remembered)];
  };
  read(first, 'alpha', 'notes', shapes);
  const fromShapes = read(later, 'beta', 'items', shapes, laterOptions);
  const afresh = read(later, 'beta', 'items', new StatementShapes(), laterOptions);
  if (JSON.stringify(fromShapes) !== JSON.stringify(afresh)) throw new Error(`remembered ${JSON.stringify(fromShapes)} but knex builds ${JSON.stringify(afresh)}`);
});

test('a statement sent from a remembered shape is the one knex builds afresh', async (t) => {
  await fc.assert(readsAlike, { numRuns: 500 });
  t.pass();
});

test('a shape whose values were listed wrong is never remembered: each statement is built by knex', (t) => {
  const shapes = new StatementShapes();
  let builds = 0;
  const build = () => {
    builds += 1;
    return sql('documents').where('tenant', 'alpha').select('doc');
  };
  for (let round = 0; round < 3; round++) t.deepEqual(shapes.statement('listed wrong', ['beta'], build).bindings, ['alpha']);
  t.is(builds, 3);
  for (let round = 0; round < 3; round++) t.deepEqual(shapes.statement('listed right', ['alpha'], build).bindings, ['alpha']);
  t.is(builds, 4);
});

/**
 * Whether `filter`, read as a conjunction (`$and`, and `$or` of one branch), pins one document by
 * a unique key: `_id`, or in `accounts` the username, equal to text a document can hold. Written from SPEC §9 alone, not from
 * the compiler.
 */
function pinsOneDocument(filter: unknown, collection: string): boolean {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) return false;
  return Object.entries(filter).some(([key, condition]) => {
    if (key === '$and') return Array.isArray(condition) && condition.some((part) => pinsOneDocument(part, collection));
    // One branch is no choice: its conditions all hold.
    if (key === '$or') return Array.isArray(condition) && condition.length === 1 && pinsOneDocument(condition[0], collection);
    if (key !== '_id' && !(collection === 'accounts' && key === 'username')) return false;
    const operators = condition !== null && typeof condition === 'object' && !Array.isArray(condition) && Object.keys(condition).some((name) => name.startsWith('$'));
    const equalTo = operators ? (condition as Record<string, unknown>).$eq : condition;
    return typeof equalTo === 'string' && isStorable(equalTo);
  });
}

// Invariant: a find is planned once (its plan kept on the connection) exactly when its filter pins
// one document by a unique key; any other find is planned for its values.
const plannedOnceWhenPinned = fc.property(filterOf(3), fc.constantFrom('accounts', 'items'), findOptions, (filter, collection, { sort, skip, limit }) => {
  let statement: ReturnType<typeof selectStatement>;
  try {
    statement = selectStatement('alpha', [inCollection(collection), compileFilter(filter, collection)], { order: compileSort(sort), skip, limit }, new StatementShapes());
  } catch {
    return;
  }
  if ((statement.planOnce === true) !== pinsOneDocument(filter, collection)) throw new Error(`planOnce ${statement.planOnce} for ${JSON.stringify(filter)} in ${collection}`);
});

test('a find is planned once exactly when its filter pins one document by _id or an account by username', (t) => {
  fc.assert(plannedOnceWhenPinned, { numRuns: 2000 });
  const planOnce = (filter: Record<string, unknown>, collection = 'items') =>
    selectStatement('alpha', [inCollection(collection), compileFilter(filter, collection)], { order: compileSort(undefined) }, new StatementShapes()).planOnce === true;
  t.true(planOnce({ _id: 'd1', a: { $gt: 1 } }));
  t.true(planOnce({ $and: [{ a: 1 }, { _id: { $eq: 'd1' } }] }));
  t.true(planOnce({ username: 'alice' }, 'accounts'));
  t.false(planOnce({ username: 'alice' }));
  t.false(planOnce({ $or: [{ _id: 'd1' }, { a: 1 }] }));
  t.true(planOnce({ $or: [{ _id: 'd1' }] }));
  t.false(planOnce({ _id: { $in: ['d1'] } }));
  t.false(planOnce({ _id: { $ne: 'd1' } }));
  t.false(planOnce({ _id: 1 }));
});
