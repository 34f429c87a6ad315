/** A filter, update, sort or projection the store does not understand (never silently ignored). */
export class DocumentQueryError extends Error {
  override name = 'DocumentQueryError';
}

/** A write that would break a unique key; `code` is 11000 as in MongoDB. */
export class DuplicateKeyError extends Error {
  override name = 'DuplicateKeyError';
  readonly code = 11000;
}

/** Refused, as the declared uniqueness would not hold; 503: the service, not the request, is at fault until the duplicates go. */
export class UnguardedWriteError extends Error {
  override name = 'UnguardedWriteError';
  readonly status = 503;
  readonly expose = true;

  constructor(collection: string, index: string) {
    super(`writes to "${collection}" are refused: its declared unique index ${index} could not be built (most often, documents already break it: remove the duplicates, then restart the service)`);
  }
}

/** A read that assumed no arrays on declared paths met some: it reads again with the recheck. Never reaches a route. */
export class DeclaredPathsHoldArrays extends Error {
  override name = 'DeclaredPathsHoldArrays';
  readonly paths: readonly string[];

  constructor(paths: readonly string[]) {
    super(`declared paths hold arrays: ${paths.join(', ')}`);
    this.paths = paths;
  }
}

const UNIQUE_VIOLATION = '23505';
/** Raised by the update functions (migration `..._document_update_operators`): a value of the wrong type, named by its path. */
const UPDATE_REFUSED = 'SPD01';
/** Raised by `documents_no_arrays_at`, its detail the JSON array of the paths holding arrays. */
const ARRAYS_AT_DECLARED_PATHS = 'SPD02';
/** A `$regex` pattern PostgreSQL cannot compile: known only once the statement runs. */
const INVALID_REGULAR_EXPRESSION = '2201B';
const KEY_NAMES: Record<string, string> = {
  documents_pkey: '_id',
  documents_username_per_tenant: 'username',
  // Until the contract migration drops it, a duplicate may meet this one first.
  documents_accounts_username: 'username',
};

export function translateWriteError(error: unknown, collection: string): unknown {
  const { code, constraint, message, detail } = (error ?? {}) as { code?: unknown; constraint?: unknown; message?: unknown; detail?: unknown };
  if (code === ARRAYS_AT_DECLARED_PATHS) return new DeclaredPathsHoldArrays(JSON.parse(String(detail)) as string[]);
  if (code === UPDATE_REFUSED) return new DocumentQueryError(String(message));
  if (code === INVALID_REGULAR_EXPRESSION) return new DocumentQueryError(`$regex: ${String(message)} (patterns are PostgreSQL's regular expressions, POSIX ARE)`);
  if (code !== UNIQUE_VIOLATION) return error;
  const key = typeof constraint === 'string' ? (KEY_NAMES[constraint] ?? constraint) : 'key';
  return new DuplicateKeyError(`duplicate key: a document of "${collection}" with this ${key} exists`);
}
