import { checkBound } from './bounds.ts';
import { DocumentQueryError } from './errors.ts';
import { checkKey } from './keys.ts';
import { isPlainObject } from '../values/json.ts';
import { isStorableText } from '../values/storable-text.ts';

/**
 * Only `parsePath` makes a path, applying the key rule (keys.ts); the walker follows and creates own properties only,
 * so no path reaches an object's prototype. Whatever reads or writes a path starts from `parsePath`.
 */
declare const parsed: unique symbol;

/** A field name or dotted path split into its keys, `"a.b"` → `["a", "b"]`: only `parsePath` makes one. */
export type FieldPath = readonly string[] & { readonly [parsed]: true };

export function parsePath(path: string, where: string): FieldPath {
  const keys = path.split('.');
  checkBound('pathKeys', keys.length, `${where}: a path`);
  for (const key of keys) {
    if (key.length === 0 || !isStorableText(key)) throw new DocumentQueryError(`${where}: "${path}" is not a valid field path`);
    if (key.startsWith('$')) throw new DocumentQueryError(`${where}: unknown operator "${key}"`);
    checkKey(key, where, path);
  }
  return keys as unknown as FieldPath;
}

/** The empty path: the document itself (the element that `$elemMatch`'s operators compare). */
export const WHOLE_DOCUMENT = [] as unknown as FieldPath;

/** The path as SQL/JSON path text, every key quoted: `$."a"."b"`. */
export function jsonPathOf(path: FieldPath): string {
  return `$${path.map((key) => `.${JSON.stringify(key)}`).join('')}`;
}

export function valueAt(document: Record<string, unknown>, path: FieldPath): unknown {
  let current: unknown = document;
  for (const key of path) {
    if (!isPlainObject(current)) return undefined;
    current = ownValue(current, key);
  }
  return current;
}

export function setAt(document: Record<string, unknown>, path: FieldPath, value: unknown): void {
  const parent = parentOf(document, path, true);
  if (parent) defineOwn(parent, lastKey(path), value);
}

export function unsetAt(document: Record<string, unknown>, path: FieldPath): void {
  const parent = parentOf(document, path, false);
  if (parent) delete parent[lastKey(path)];
}

function parentOf(document: Record<string, unknown>, path: FieldPath, create: boolean): Record<string, unknown> | undefined {
  let current = document;
  for (const key of path.slice(0, -1)) {
    let next = ownValue(current, key);
    if (next === undefined) {
      if (!create) return undefined;
      next = defineOwn(current, key, {});
    }
    if (!isPlainObject(next)) {
      if (!create) return undefined;
      throw new DocumentQueryError(`cannot create field "${path.join('.')}": "${key}" is not an object`);
    }
    current = next;
  }
  return current;
}

/** The object's own value at `key`: never one a prototype lends (`constructor`, `toString`). */
function ownValue(object: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

/** Makes `key` an own data property, as JSON.parse does: never a setter's call, `__proto__`'s included. */
function defineOwn<Value>(object: Record<string, unknown>, key: string, value: Value): Value {
  Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  return value;
}

function lastKey(path: FieldPath): string {
  return path[path.length - 1] as string;
}
