import { DocumentQueryError } from './errors.ts';

/**
 * The one rule for keys, applied to every segment of a field path (`parsePath`) and to every
 * key of a value the store is given (`toJsonValue`). `__proto__` is refused wherever it appears:
 * as a path segment it names an object's prototype, not a field, and as a stored key it would
 * come back from every read as an own property that code downstream (`Object.assign`, a deep
 * merge) turns back into a prototype write. `constructor` and `prototype` are ordinary keys:
 * real data uses them, and the store walks own properties only (paths.ts), so they stay data.
 */
const REFUSED_KEY = '__proto__';

/** Throws the error that names the refused key and the path it is in, when `key` is that key. */
export function checkKey(key: string, where: string, path: string): void {
  if (key === REFUSED_KEY) throw refused(where, path);
}

/** Applies the rule to every key inside a JSON value, objects within arrays included. */
export function checkKeysWithin(value: unknown, where: string): void {
  const found = refusedKeyPath(value);
  if (found !== undefined) throw refused(where, found.join('.'));
}

/** The keys (and array indexes) that lead to the first refused key inside `value`. */
function refusedKeyPath(value: unknown): string[] | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const array = Array.isArray(value);
  for (const key of Object.keys(value)) {
    if (!array && key === REFUSED_KEY) return [key];
    const found = refusedKeyPath((value as Record<string, unknown>)[key]);
    if (found !== undefined) return [key, ...found];
  }
  return undefined;
}

function refused(where: string, path: string): DocumentQueryError {
  return new DocumentQueryError(`${where}: "${REFUSED_KEY}" cannot be a key, it names a prototype, not a field (in "${path}")`);
}
