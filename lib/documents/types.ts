import type { SqlFragment } from '../db/statement.ts';

/** A stored document: a plain JSON object whose `_id` is a string. */
export interface Document {
  _id: string;
  [field: string]: unknown;
}

/** A MongoDB-style filter: fields or dotted paths to values or operator objects, `$and`, `$or`. */
export type Filter = Record<string, unknown>;

/** The update operators of SPEC §9; any other key is an error. */
export interface UpdateSpec {
  $set?: Record<string, unknown>;
  $unset?: Record<string, unknown>;
}

export type SortDirection = 1 | -1 | 'asc' | 'desc' | 'ascending' | 'descending';
export type SortSpec = Record<string, SortDirection>;

/** `{field: 1}` keeps only the named fields (and `_id`), `{field: 0}` drops them. */
export type ProjectionSpec = Record<string, 0 | 1 | boolean>;

export interface InsertOneResult {
  acknowledged: true;
  insertedId: string;
}

export interface InsertManyResult {
  acknowledged: true;
  insertedCount: number;
  /** Keyed by the index of each document in the input array, as the MongoDB driver does. */
  insertedIds: Record<number, string>;
}

export interface UpdateResult {
  acknowledged: true;
  matchedCount: number;
  /** Documents that really changed: a `$set` to the value a field already has does not count. */
  modifiedCount: number;
  upsertedCount: 0;
  upsertedId: null;
}

export interface DeleteResult {
  acknowledged: true;
  deletedCount: number;
}

export type { SqlBinding, SqlFragment } from '../db/statement.ts';

/**
 * What the indexes a project declares change in how a collection's filters and sorts compile
 * (declared-paths.ts): conditions and orders on a declared path are written on the index's own
 * key expressions, with the same results.
 */
export interface DeclaredPaths {
  /** `filter` compiled, its declared paths' conditions on their index keys; `compileRest` compiles any part as usual. */
  compileFilter(filter: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment;
  /** `filter` as disjoint conditions to read one by one, each in order from an index; undefined when no declared path is in it. */
  branches(filter: unknown, sort: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment[] | undefined;
  /** The ORDER BY terms of `path` when it is declared, else undefined. */
  sortTerm(path: readonly string[], direction: 'asc' | 'desc'): SqlFragment | undefined;
}
