import test from 'ava';
import fc from 'fast-check';
import { sql, StatementShapes } from '../../lib/db/statement.ts';
import { compileFilter } from '../../lib/documents/filter.ts';
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
