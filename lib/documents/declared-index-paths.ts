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

/**
 * How long an instance takes a unique index for unbuilt before asking the database again (SPEC §15.1: stale 2 s at
 * most): another instance's start may have built it since, once the duplicates were removed.
 */
const UNBUILT_RECHECK_MS = 2000;

interface Unbuilt {
  readonly index: UnbuiltIndex;
  /** Whether the index is now built and valid, asked of the database. */
  readonly isBuilt: () => Promise<boolean>;
  checkedAt: number;
  checking: Promise<void> | undefined;
}

/** Bound once as the projects are mounted; also the collections whose declared unique index could not be built (writes refused). */
export class DeclaredIndexPaths {
  #byCollection: ReadonlyMap<string, CollectionDeclaredPaths> = new Map();
  readonly #unbuilt = new Map<string, Unbuilt>();

  /** The indexes unbuilt as last seen; those seen 2 s ago or more are asked about again meanwhile (for `/readyz` and the gauge). */
  unbuilt(): readonly UnbuiltIndex[] {
    for (const collection of this.#unbuilt.keys()) void this.unguarded(collection);
    return [...this.#unbuilt.values()].map(({ index }) => index);
  }

  markUnbuilt(index: UnbuiltIndex, isBuilt: () => Promise<boolean> = async () => false): void {
    this.#unbuilt.set(index.collection, { index, isBuilt, checkedAt: Date.now(), checking: undefined });
  }

  /** The unbuilt index guarding `collection`'s writes; at once when there is none (the common case). */
  unguarded(collection: string): Promise<UnbuiltIndex | undefined> | undefined {
    const unbuilt = this.#unbuilt.get(collection);
    if (unbuilt === undefined) return undefined;
    if (unbuilt.checking === undefined && Date.now() - unbuilt.checkedAt >= UNBUILT_RECHECK_MS) {
      unbuilt.checking = unbuilt
        .isBuilt()
        .then(
          (built) => {
            if (built && this.#unbuilt.get(collection) === unbuilt) this.#unbuilt.delete(collection);
          },
          // The database not answering: still unbuilt as far as this instance knows, asked again 2 s later.
          () => undefined,
        )
        .finally(() => {
          unbuilt.checkedAt = Date.now();
          unbuilt.checking = undefined;
        });
    }
    return (unbuilt.checking ?? Promise.resolve()).then(() => this.#unbuilt.get(collection)?.index);
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
