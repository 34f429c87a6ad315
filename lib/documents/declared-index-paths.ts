import type { SqlFragment } from '../db/statement.ts';

/**
 * How the document store writes a collection's filters and sorts on the paths a project declared
 * an index on (`api/indexes.js`; lib/documents/declared-paths.ts): on the index's own key
 * expressions, with the same results.
 */
export interface DeclaredPaths {
  /** `filter` compiled, its declared paths' conditions on their index keys; `compileRest` compiles any part as usual. */
  compileFilter(filter: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment;
  /** `filter` as disjoint conditions to read one by one, each in order from an index; undefined when no declared path is in it. */
  branches(filter: unknown, sort: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment[] | undefined;
  /** The ORDER BY terms of `path` when it is declared, else undefined. */
  sortTerm(path: readonly string[], direction: 'asc' | 'desc'): SqlFragment | undefined;
}

/**
 * A collection's declared paths (lib/documents/declared-paths.ts). A document can match a filter
 * through an array on a declared path, which the index cannot show, so reads recheck documents
 * holding one, unless they assume, for one tenant, that none does on the paths where none was
 * seen: such a read's statement proves it, or fails (`DeclaredPathsHoldArrays`, errors.ts).
 */
export interface CollectionDeclaredPaths extends DeclaredPaths {
  /** These paths, for one read of `tenant`'s documents that leaves out the recheck where no array was seen. */
  assumingNoArrays(tenant: string): DeclaredPaths;
  /** The database showed these paths of `tenant`'s collection to hold arrays: its reads recheck them from now on. */
  holdArrays(tenant: string, paths: readonly string[]): void;
}

/** A declared unique index the start-up build could not make (documents already break it). */
export interface UnbuiltIndex {
  readonly project: string;
  readonly collection: string;
  readonly index: string;
}

/**
 * The declared paths of each collection, bound once as the projects are mounted; none before.
 * Also the collections whose declared unique index could not be built: writes to them are refused.
 */
export class DeclaredIndexPaths {
  #byCollection: ReadonlyMap<string, CollectionDeclaredPaths> = new Map();
  readonly #unbuilt = new Map<string, UnbuiltIndex>();

  unbuilt(): readonly UnbuiltIndex[] {
    return [...this.#unbuilt.values()];
  }

  markUnbuilt(index: UnbuiltIndex): void {
    this.#unbuilt.set(index.collection, index);
  }

  /** The unique index that was to guard writes to `collection` and could not be built, if any. */
  unguarded(collection: string): UnbuiltIndex | undefined {
    return this.#unbuilt.get(collection);
  }

  bind(byCollection: ReadonlyMap<string, CollectionDeclaredPaths>): void {
    this.#byCollection = byCollection;
  }

  of(collection: string): CollectionDeclaredPaths | undefined {
    return this.#byCollection.get(collection);
  }
}

declare module '../core/runtime.ts' {
  interface Runtime {
    /** What the document store writes on declared index keys, by collection (`api/indexes.js`). */
    readonly declaredPaths: DeclaredIndexPaths;
  }
}
