import { DocumentQueryError } from './errors.ts';
import { compileProjection } from './projection.ts';
import type { FindPlan } from './plan.ts';
import type { Document, ProjectionSpec, SortSpec } from './types.ts';

export interface CursorQuery {
  sort?: SortSpec;
  skip?: number;
  limit?: number;
}

export type CursorSource = (query: CursorQuery) => Promise<Document[]>;

export type CursorPlanner = (query: CursorQuery) => Promise<FindPlan>;

/**
 * The result of `find`: chain `.sort()`, `.skip()`, `.limit()`, `.project()`, then `.toArray()`
 * (or `for await`). Nothing runs until then, as with the MongoDB driver.
 */
export class FindCursor<Result extends Record<string, unknown> = Document> implements AsyncIterable<Result> {
  readonly #source: CursorSource;
  readonly #planner: CursorPlanner;
  readonly #query: CursorQuery = {};
  #projection: ProjectionSpec | undefined;

  constructor(source: CursorSource, planner: CursorPlanner) {
    this.#source = source;
    this.#planner = planner;
  }

  sort(spec: SortSpec): this {
    this.#query.sort = spec;
    return this;
  }

  skip(count: number): this {
    this.#query.skip = count === 0 ? undefined : wholeNumber('skip', count);
    return this;
  }

  /** `limit(0)` means no limit, and a negative limit counts as its absolute value, as in MongoDB. */
  limit(count: number): this {
    this.#query.limit = count === 0 ? undefined : wholeNumber('limit', Math.abs(count));
    return this;
  }

  project<Projected extends Record<string, unknown> = Record<string, unknown>>(spec: ProjectionSpec): FindCursor<Projected> {
    this.#projection = spec;
    return this as unknown as FindCursor<Projected>;
  }

  async toArray(): Promise<Result[]> {
    const projector = compileProjection(this.#projection);
    const documents = await this.#source({ ...this.#query });
    return (projector ? documents.map(projector) : documents) as unknown as Result[];
  }

  /**
   * How PostgreSQL would run this find, without running it: its plan, and the indexes it reads
   * (`indexes`: a declared index by its name), to see in development whether a find uses one.
   */
  explain(): Promise<FindPlan> {
    compileProjection(this.#projection);
    return this.#planner({ ...this.#query });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Result> {
    yield* await this.toArray();
  }
}

/** A skip or a limit as the store takes them: a whole number, 0 or more. */
export function wholeNumber(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new DocumentQueryError(`${name} needs a whole number, got ${String(value)}`);
  return value;
}
