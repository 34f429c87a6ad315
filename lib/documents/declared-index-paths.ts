import type { SqlFragment } from '../db/statement.ts';

/** Filters and sorts written on the key expressions of the indexes projects declare (`api/indexes.js`; declared-paths.ts). */
export interface DeclaredPaths {
  /** `filter` compiled, its declared paths' conditions on their index keys; `compileRest` compiles any part as usual. */
  compileFilter(filter: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment;
  /** `filter` as disjoint conditions to read one by one, each in order from an index; undefined when no declared path is in it. */
  branches(filter: unknown, sort: unknown, compileRest: (part: unknown) => SqlFragment): SqlFragment[] | undefined;
  /** The ORDER BY terms of `path` when it is declared, else undefined. */
  sortTerm(path: readonly string[], direction: 'asc' | 'desc'): SqlFragment | undefined;
}

/** Reads recheck documents holding arrays on declared paths unless, for one tenant, their statement proves none does or fails (`DeclaredPathsHoldArrays`). */
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

/** Bound once as the projects are mounted; also the collections whose declared unique index could not be built (writes refused). */
export class DeclaredIndexPaths {
  #byCollection: ReadonlyMap<string, CollectionDeclaredPaths> = new Map();
  readonly #unbuilt = new Map<string, UnbuiltIndex>();

  unbuilt(): readonly UnbuiltIndex[] {
    return [...this.#unbuilt.values()];
  }

  markUnbuilt(index: UnbuiltIndex): void {
    this.#unbuilt.set(index.collection, index);
  }

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
