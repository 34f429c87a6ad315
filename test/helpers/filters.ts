import fc from 'fast-check';

/**
 * Arbitraries for the document store's whole input grammar (SPEC §9), over a small domain of
 * names and values so that generated documents and filters collide often: tenants share `_id`s
 * and fields, and filters match. Field names include `_id`, `tenant`, `collection`, `doc`, `id`
 * and dotted paths; values include null, nested objects and arrays.
 */
export const FIELD_NAMES = ['a', 'b', 'n', 'tags', 'tenant', 'collection', 'doc', 'id', 'username', 'a.b', 'a.c', 'tags.0', 'x.y.z'] as const;
export const DOCUMENT_IDS = ['d0', 'd1', 'd2', 'd3', 'd4'] as const;

const scalar = fc.oneof(
  fc.constantFrom(-1, 0, 1, 2, 2.5, 10),
  fc.constantFrom('', 'a', 'b', 'alpha', 'beta', 'd1', '0'),
  fc.boolean(),
  fc.constant(null),
);

/** A JSON value of at most two levels, from the shared domain. */
export const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('b', 'c', 'z'), scalar, { maxKeys: 2 }) },
);

const topLevelField = fc.constantFrom('a', 'b', 'n', 'tags', 'tenant', 'collection', 'doc', 'id', 'username', 'x');

/** A stored document: `_id` from a small pool, fields (never dotted: they are keys) from the domain. */
export const storedDocument = fc.record({
  _id: fc.constantFrom(...DOCUMENT_IDS),
  fields: fc.dictionary(topLevelField, value, { maxKeys: 4 }),
  a: fc.option(fc.dictionary(fc.constantFrom('b', 'c'), scalar, { maxKeys: 2 }), { nil: undefined }),
}).map(({ _id, fields, a }) => ({ ...fields, ...(a === undefined ? {} : { a }), _id }));

/** The documents of one tenant's collection: `_id`s distinct, as the primary key demands. */
export const collectionDocuments = fc.uniqueArray(storedDocument, { maxLength: 6, selector: (document) => document._id });

const fieldName = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...FIELD_NAMES) }, { weight: 1, arbitrary: fc.constant('_id') });

const comparison = fc.record({ op: fc.constantFrom('$gt', '$gte', '$lt', '$lte'), operand: scalar }).map(({ op, operand }) => ({ [op]: operand }));

/** One field condition: a value compared whole, or an operator object (sometimes several operators). */
const fieldCondition: fc.Arbitrary<unknown> = fc.oneof(
  value,
  value.map((operand) => ({ $eq: operand })),
  value.map((operand) => ({ $ne: operand })),
  comparison,
  fc.array(value, { maxLength: 4 }).map((operands) => ({ $in: operands })),
  fc.array(value, { maxLength: 4 }).map((operands) => ({ $nin: operands })),
  fc.boolean().map((flag) => ({ $exists: flag })),
  fc.tuple(comparison, comparison).map(([low, high]) => ({ ...low, ...high })),
  fc.constant({ $exists: true, $ne: null }),
  fc.record({ pattern: fc.constantFrom('^a', 'a', '.', '^$', 'b|1', '[0-9]', '^(al|be)'), insensitive: fc.boolean() }).map(({ pattern, insensitive }) =>
    insensitive ? { $regex: pattern, $options: 'i' } : { $regex: pattern },
  ),
);

/** Always true (or always false) whatever the row: the shapes that widened a query before the fix. */
const tautology = fieldName.chain((field) =>
  fc.constantFrom(
    { $or: [{ [field]: { $exists: true } }, { [field]: { $exists: false } }] },
    { $or: [{ [field]: { $exists: false } }, { [field]: { $exists: true } }] },
    { $or: [{ [field]: null }, { [field]: { $ne: null } }] },
    { $or: [{ [field]: { $ne: null } }, { [field]: null }] },
    { $and: [{ [field]: { $exists: true } }, { [field]: { $exists: false } }] },
  ),
);

/** Filters nested up to `depth` levels of `$and`/`$or`. */
export function filterOf(depth: number): fc.Arbitrary<Record<string, unknown>> {
  const leaf = fc.oneof(
    { weight: 4, arbitrary: fc.dictionary(fieldName, fieldCondition, { minKeys: 1, maxKeys: 2 }) },
    { weight: 1, arbitrary: tautology },
    { weight: 1, arbitrary: fc.constant({}) },
  );
  if (depth === 0) return leaf;
  const inner = filterOf(depth - 1);
  return fc.oneof(
    { weight: 3, arbitrary: leaf },
    { weight: 1, arbitrary: fc.array(inner, { minLength: 1, maxLength: 3 }).map((branches) => ({ $or: branches })) },
    { weight: 1, arbitrary: fc.array(inner, { minLength: 1, maxLength: 3 }).map((branches) => ({ $and: branches })) },
    { weight: 1, arbitrary: fc.tuple(inner, inner).map(([left, right]) => ({ ...left, ...right })) },
  );
}

/** Any filter of the grammar, `$and`/`$or` nested to depth 4, and sometimes a malformed one. */
export const filter: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 20, arbitrary: filterOf(4) },
  { weight: 1, arbitrary: fc.constantFrom({ $where: 'true' }, { a: { $regex: '.', $options: 'g' } }, { a: { $regex: '(' } }, { $or: [] }, { a: { $in: 'x' } }, { a: { $gt: [1] } }, { 'a..b': 1 }, { a: { $eq: 1, b: 2 } }) },
);

const direction = fc.constantFrom(1, -1);

/** What `find` is asked besides its filter. */
export const findOptions = fc.record({
  sort: fc.option(fc.dictionary(fc.constantFrom('a', 'n', 'b', 'tags', 'a.b', '_id'), direction, { minKeys: 1, maxKeys: 2 }), { nil: undefined }),
  skip: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
  limit: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  projection: fc.option(
    fc.oneof(fc.dictionary(fc.constantFrom('a', 'n', 'tags', 'a.b'), fc.constant(1), { minKeys: 1, maxKeys: 2 }), fc.dictionary(fc.constantFrom('a', 'b', '_id'), fc.constant(0), { minKeys: 1, maxKeys: 2 })),
    { nil: undefined },
  ),
});

/** `{$each: [...]}` or a single value, for `$push` and `$addToSet`. */
const added = fc.oneof(value, fc.array(value, { maxLength: 3 }).map((each) => ({ $each: each })));

/** The other update operators, on fields documents hold (so types sometimes clash: an error in both worlds alike). */
const moreOperators = fc.oneof(
  fc.dictionary(fc.constantFrom('n', 'count', 'a.b'), fc.constantFrom(1, -1, 2.5), { minKeys: 1, maxKeys: 2 }).map((fields) => ({ $inc: fields })),
  fc.dictionary(fc.constantFrom('tags', 'log'), added, { minKeys: 1, maxKeys: 1 }).map((fields) => ({ $push: fields })),
  fc.dictionary(fc.constantFrom('tags', 'log'), added, { minKeys: 1, maxKeys: 1 }).map((fields) => ({ $addToSet: fields })),
  fc.dictionary(fc.constantFrom('tags', 'log'), fc.oneof(scalar, fc.array(scalar, { maxLength: 2 }).map((values) => ({ $in: values }))), { minKeys: 1, maxKeys: 1 }).map((fields) => ({ $pull: fields })),
);

/** An update: `$set` of a marker (so that every matched row changes) and sometimes more. */
export const update = fc.record({
  set: fc.dictionary(fc.constantFrom('b', 'n', 'a.c', 'touched'), value, { maxKeys: 2 }),
  unset: fc.option(fc.constantFrom('tags', 'x', 'username'), { nil: undefined }),
  more: fc.option(moreOperators, { nil: undefined }),
}).map(({ set, unset, more }) => ({
  $set: { ...set, marker: 'updated' },
  ...(unset === undefined || unset in set ? {} : { $unset: { [unset]: '' } }),
  ...more,
}));
