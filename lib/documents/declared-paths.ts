import type { CollectionDeclaredPaths, DeclaredIndexPaths } from './declared-index-paths.ts';
import { isPlainObject, type Json } from '../values/json.ts';
import { isStorable } from '../values/storable-text.ts';
import { entryOf } from '../values/map-entry.ts';
import { arrayRanks, pathKeys, rankOf, type IndexDeclaration, type PathKeys } from './index-keys.ts';
import type { FieldPath } from './paths.ts';
import type { DeclaredPaths, SqlFragment } from './types.ts';
import { toJsonValue } from './values.ts';
import { all, any, isOperatorObject } from './filter.ts';

/**
 * Filters and sorts on declared paths (SPEC §9.4), written on the index's key expressions (index-keys.ts) with
 * exactly the results of the unindexed SQL:
 *
 * - equality and ranges with a number or string, `$in` of scalars, compare within the value's type (5 never matches "5");
 * - a document can also match through an array on the path, which the key cannot see: documents whose key is an
 *   array's (or, on a dotted path, a missing value's) are read through the same index and rechecked unindexed;
 * - any other condition (`$ne`, `$exists`, null, objects) is compiled as usual.
 *
 * The recheck costs as much to plan as the read. `assumingNoArrays` leaves it out where a tenant's documents were never
 * seen to hold arrays, adding `documents_no_arrays_at`, which fails naming the paths that do (`holdArrays`).
 */
export class CollectionIndexes implements CollectionDeclaredPaths {
  readonly #collection: string;
  readonly #keys: ReadonlyMap<string, PathKeys>;
  readonly #holdingArrays = new Map<string, Set<string>>();

  constructor(collection: string, paths: Iterable<FieldPath>) {
    this.#collection = collection;
    this.#keys = new Map([...paths].map((path) => [path.join('.'), pathKeys(path)]));
  }

  compileFilter(filter: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment {
    return this.#compileFilter(filter, compileRest, RECHECK_EVERY_PATH);
  }

  /** Split on one declared entry (the first sort key's, when it has one), so each arm is read in order with its own limit (`branchedSelectStatement`). */
  branches(filter: unknown, sort: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment[] | undefined {
    return this.#branches(filter, sort, compileRest, RECHECK_EVERY_PATH);
  }

  sortTerm(path: readonly string[], direction: 'asc' | 'desc'): SqlFragment | undefined {
    const keys = this.#keys.get(path.join('.'));
    if (keys === undefined) return undefined;
    return { sql: `${keys.rank} ${direction}, ${keys.text} ${direction}, ${keys.json} ${direction}`, bindings: [] };
  }

  assumingNoArrays(tenant: string): DeclaredPaths {
    const noArraysSeen: AssumeNoArrays = {
      assumes: (path) => this.#holdingArrays.get(tenant)?.has(path) !== true,
      // The tenant named, not left to row-level security: Citus routes the check to one shard.
      proof: (paths) => ({ sql: 'documents_no_arrays_at(?, ?, ?::text[])', bindings: [tenant, this.#collection, paths] }),
    };
    return {
      compileFilter: (filter, compileRest) => this.#compileFilter(filter, compileRest, noArraysSeen),
      branches: (filter, sort, compileRest) => this.#branches(filter, sort, compileRest, noArraysSeen),
      sortTerm: (path, direction) => this.sortTerm(path, direction),
    };
  }

  holdArrays(tenant: string, paths: readonly string[]): void {
    const holding = entryOf(this.#holdingArrays, tenant, () => new Set<string>());
    for (const path of paths) holding.add(path);
  }

  #compileFilter(filter: unknown, compileRest: (part: unknown) => SqlFragment, noArrays: AssumeNoArrays): SqlFragment {
    const split = this.#split(filter, compileRest, noArrays);
    if (split === undefined) return compileRest(filter);
    return all([...split.rest, ...split.entries.map((arms) => any([...arms]))]);
  }

  #branches(filter: unknown, sort: unknown, compileRest: (part: unknown) => SqlFragment, noArrays: AssumeNoArrays): SqlFragment[] | undefined {
    const split = this.#split(filter, compileRest, noArrays);
    if (split === undefined) return undefined;
    const firstSortKey = isPlainObject(sort) ? Object.keys(sort)[0] : undefined;
    const chosen = Math.max(0, split.keys.indexOf(firstSortKey ?? ''));
    const others = split.entries.filter((_, index) => index !== chosen).map((arms) => any([...arms]));
    return (split.entries[chosen] as Arms).map((arm) => all([...split.rest, ...others, arm]));
  }

  /** When `noArrays` assumes away a recheck, `rest` ends with the condition that proves it. */
  #split(filter: unknown, compileRest: (part: unknown) => SqlFragment, noArrays: AssumeNoArrays): Split | undefined {
    if (!isPlainObject(filter)) return undefined;
    const rest: Array<[string, unknown]> = [];
    const split: Split = { rest: [], keys: [], entries: [] };
    const assumed: string[] = [];
    for (const [key, value] of Object.entries(filter)) {
      const keys = this.#keys.get(key);
      const condition = keys === undefined ? undefined : servedByIndex(keys, value);
      if (keys === undefined || condition === undefined) {
        rest.push([key, value]);
        continue;
      }
      const recheck = () => all([rankIn(keys, arrayRanks(keys)), compileRest(Object.fromEntries([[key, value]]))]);
      split.keys.push(key);
      // No scalar meets bounds of two types: only an array can, and the planner would prove the scalar arm empty
      // without ever running the proof beside it.
      if (condition === NO_SCALAR) split.entries.push([recheck()]);
      else if (noArrays.assumes(key)) {
        split.entries.push([condition]);
        assumed.push(key);
      } else split.entries.push([condition, recheck()]);
    }
    if (split.entries.length === 0) return undefined;
    if (rest.length > 0) split.rest.push(compileRest(Object.fromEntries(rest)));
    if (assumed.length > 0) split.rest.push(noArrays.proof(assumed));
    return split;
  }
}

/** Which declared paths a read may assume hold no array, and the condition that proves it in the same statement. */
interface AssumeNoArrays {
  assumes(path: string): boolean;
  proof(paths: string[]): SqlFragment;
}

const RECHECK_EVERY_PATH: AssumeNoArrays = {
  assumes: () => false,
  proof: () => {
    throw new Error('no path is assumed to hold no array');
  },
};

type Arms = readonly [SqlFragment] | readonly [SqlFragment, SqlFragment];

/** A condition no scalar meets (`{$gt: 1, $gte: ""}`): what it matches, it matches through an array. */
const NO_SCALAR = Symbol('no scalar');

interface Split {
  readonly rest: SqlFragment[];
  readonly keys: string[];
  readonly entries: Arms[];
}

const RANGES = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/** Anything the index does not serve, an invalid operand included, is left to the unindexed filter, which names what is wrong. */
function servedByIndex(keys: PathKeys, value: unknown): SqlFragment | typeof NO_SCALAR | undefined {
  try {
    return indexedCondition(keys, value);
  } catch {
    return undefined;
  }
}

function indexedCondition(keys: PathKeys, value: unknown): SqlFragment | typeof NO_SCALAR | undefined {
  if (!isOperatorObject(value, '')) {
    const equal = equalTo(keys, scalarOf(value));
    return equal === undefined ? undefined : withinType(keys, [equal]);
  }
  const comparisons: TypedComparison[] = [];
  const lists: InList[] = [];
  for (const [operator, operand] of Object.entries(value)) {
    const list = operator === '$in' ? inList(keys, operand) : undefined;
    const comparison = operator === '$eq' ? equalTo(keys, scalarOf(operand)) : operator in RANGES ? compared(keys, RANGES[operator as keyof typeof RANGES], scalarOf(operand)) : undefined;
    if (list === undefined && comparison === undefined) return undefined;
    if (list !== undefined) lists.push(list);
    if (comparison !== undefined) comparisons.push(comparison);
  }
  const rankSets = [...comparisons.map(({ rank }) => [rank]), ...lists.map(({ ranks }) => ranks)];
  const possible = rankSets.reduce((kept, ranks) => kept.filter((rank) => ranks.includes(rank)));
  if (possible.length === 0) return NO_SCALAR;
  return all([...(comparisons.length > 0 ? [withinType(keys, comparisons)] : []), ...lists.map(({ condition }) => condition)]);
}

function scalarOf(operand: unknown): string | number | boolean | undefined {
  const value: Json = toJsonValue(operand, 'filter');
  if (typeof value === 'string') return isStorable(value) ? value : undefined;
  return typeof value === 'number' || typeof value === 'boolean' ? value : undefined;
}

function equalTo(keys: PathKeys, value: string | number | boolean | undefined): TypedComparison | undefined {
  if (value === undefined) return undefined;
  return typedComparison(keys, value, '=');
}

/** Numbers compare by value, strings by code point: as the unindexed filter compares them. Booleans only by equality. */
function compared(keys: PathKeys, operator: string, value: string | number | boolean | undefined): TypedComparison | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined;
  return typedComparison(keys, value, operator);
}

interface TypedComparison {
  readonly rank: number;
  readonly onKey: SqlFragment;
}

function typedComparison(keys: PathKeys, value: string | number | boolean, operator: string): TypedComparison {
  if (typeof value === 'string') return { rank: rankOf(value), onKey: { sql: `${keys.text} ${operator} ?`, bindings: [value] } };
  return { rank: rankOf(value), onKey: { sql: `${keys.json} ${operator} ?::jsonb`, bindings: [JSON.stringify(value)] } };
}

/** Comparisons of one rank, the rank condition written once (a shorter statement plans faster); `text is null` lets the btree range over the jsonb key after it. */
function withinType(keys: PathKeys, comparisons: readonly TypedComparison[]): SqlFragment {
  const [first] = comparisons as [TypedComparison];
  const type = first.rank === rankOf('') ? `${keys.rank} = ${first.rank}` : `${keys.rank} = ${first.rank} and ${keys.text} is null`;
  return { sql: [type, ...comparisons.map(({ onKey }) => onKey.sql)].join(' and '), bindings: comparisons.flatMap(({ onKey }) => onKey.bindings) };
}

interface InList {
  readonly condition: SqlFragment;
  /** The ranks of its values' types. */
  readonly ranks: readonly number[];
}

/** `$in` of strings, numbers and booleans, each kind one bound array; any other value leaves it unindexed. */
function inList(keys: PathKeys, operand: unknown): InList | undefined {
  if (!Array.isArray(operand) || operand.length === 0) return undefined;
  const values = operand.map(scalarOf);
  if (values.some((value) => value === undefined)) return undefined;
  const strings = values.filter((value) => typeof value === 'string');
  const numbers = values.filter((value) => typeof value === 'number').map((value) => JSON.stringify(value));
  const booleans = values.filter((value) => typeof value === 'boolean').map((value) => JSON.stringify(value));
  const jsonIn = (rank: number, list: string[]): SqlFragment => ({ sql: `${keys.rank} = ${rank} and ${keys.text} is null and ${keys.json} = any(?::jsonb[])`, bindings: [list] });
  const kinds: InList[] = [];
  if (strings.length > 0) kinds.push({ ranks: [3], condition: { sql: `${keys.rank} = 3 and ${keys.text} = any(?::text[])`, bindings: [strings as string[]] } });
  if (numbers.length > 0) kinds.push({ ranks: [2], condition: jsonIn(2, numbers) });
  if (booleans.length > 0) kinds.push({ ranks: [6], condition: jsonIn(6, booleans) });
  return { condition: any(kinds.map(({ condition }) => condition)), ranks: kinds.flatMap(({ ranks }) => ranks) };
}

function rankIn(keys: PathKeys, ranks: readonly number[]): SqlFragment {
  return { sql: `${keys.rank} in (${ranks.join(', ')})`, bindings: [] };
}

/** From now on, stores reading `target` write on the declared paths' index keys: the same results whether or not the indexes exist yet. */
export function useDeclaredIndexes(target: DeclaredIndexPaths, declarations: readonly IndexDeclaration[]): void {
  const byCollection = new Map<string, FieldPath[]>();
  for (const { collection, fields } of declarations) entryOf(byCollection, collection, () => []).push(...fields.map(({ path }) => path));
  target.bind(new Map([...byCollection].map(([collection, paths]) => [collection, new CollectionIndexes(collection, paths)])));
}
