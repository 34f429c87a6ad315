
/** A stored document: a plain JSON object whose `_id` is a string. */
export interface Document {
  _id: string;
  [field: string]: unknown;
}

/** A MongoDB-style filter: fields or dotted paths to values or operator objects, `$and`, `$or`; at most 1 000 conditions, and 100 000 values a `$in` (`QUERY_BOUNDS`). */
export type Filter = Record<string, unknown>;

/** `{$each: [values]}`: several values for `$push` or `$addToSet`, at most 10 000. */
export interface EachModifier {
  $each: unknown[];
}

/**
 * The update operators, each an object of fields (or dotted paths) to operands; any other key
 * is an error. All of an update is applied by one statement, atomically per document. At most
 * 1 000 fields, all operators together.
 */
export interface UpdateSpec {
  /** Sets each field, creating objects on the way. */
  $set?: Record<string, unknown>;
  /** Removes each field (the operand is ignored, `''` by convention). */
  $unset?: Record<string, unknown>;
  /** Adds the number to each field (a missing field starts at 0); a field holding anything but a number is an error. */
  $inc?: Record<string, number>;
  /** Appends the value (or each of `{$each: [...]}`) to each array field (a missing field becomes an array); a non-array is an error. */
  $push?: Record<string, unknown>;
  /** Appends the value (or each of `{$each: [...]}`) unless the array already holds an equal one. */
  $addToSet?: Record<string, unknown>;
  /** Removes the elements equal to the value, or to any of `{$in: [...]}`; a missing field is left alone, a non-array is an error. */
  $pull?: Record<string, unknown>;
}

/** Options of `find`: the cursor's, given at once. */
export interface FindOptions {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
  projection?: ProjectionSpec;
}

/** Options of `updateOne` and `updateMany`. */
export interface UpdateOptions {
  /** When no document matches, insert one made of the filter's equality fields, then updated. */
  upsert?: boolean;
}

/** Options of `findOneAndUpdate`. */
export interface FindOneAndUpdateOptions {
  /** The document as it was (the default, as in the MongoDB driver) or as it became. */
  returnDocument?: 'before' | 'after';
  upsert?: boolean;
  /** Which document is updated when several match (else the first by `_id`). */
  sort?: SortSpec;
  projection?: ProjectionSpec;
}

export type SortDirection = 1 | -1 | 'asc' | 'desc' | 'ascending' | 'descending';
/** Fields or dotted paths to their direction, in order of precedence: at most 32 keys. */
export type SortSpec = Record<string, SortDirection>;

/** `{field: 1}` keeps only the named fields (and `_id`), `{field: 0}` drops them; at most 100 fields. */
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
  /** 0 when the document was upserted, as in the MongoDB driver. */
  matchedCount: number;
  /** Documents that really changed: a `$set` to the value a field already has does not count. */
  modifiedCount: number;
  upsertedCount: 0 | 1;
  /** The `_id` of the upserted document, else null. */
  upsertedId: string | null;
}

export interface DeleteResult {
  acknowledged: true;
  deletedCount: number;
}

export type { SqlBinding, SqlFragment } from '../db/statement.ts';

export type { DeclaredPaths } from './declared-index-paths.ts';
