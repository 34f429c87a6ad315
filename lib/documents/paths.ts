import { DocumentQueryError } from './errors.ts';
import { isPlainObject, isStorableText } from './values.ts';

/** A field name or dotted path split into its keys: `"a.b"` → `["a", "b"]`. */
export type FieldPath = readonly string[];

export function parsePath(path: string, where: string): FieldPath {
  const keys = path.split('.');
  for (const key of keys) {
    if (key.length === 0 || !isStorableText(key)) throw new DocumentQueryError(`${where}: "${path}" is not a valid field path`);
    if (key.startsWith('$')) throw new DocumentQueryError(`${where}: unknown operator "${key}"`);
  }
  return keys;
}

/** The path as SQL/JSON path text, every key quoted: `$."a"."b"`. */
export function jsonPathOf(path: FieldPath): string {
  return `$${path.map((key) => `.${JSON.stringify(key)}`).join('')}`;
}

/** The value at `path` inside a plain object, or undefined when any key is missing. */
export function valueAt(document: Record<string, unknown>, path: FieldPath): unknown {
  let current: unknown = document;
  for (const key of path) {
    if (!isPlainObject(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/** Sets `path`, creating missing objects on the way; a non-object in the way is an error. */
export function setAt(document: Record<string, unknown>, path: FieldPath, value: unknown): void {
  const parent = parentOf(document, path, true);
  if (parent) parent[path[path.length - 1] as string] = value;
}

/** Removes `path` when present. */
export function unsetAt(document: Record<string, unknown>, path: FieldPath): void {
  const parent = parentOf(document, path, false);
  if (parent) delete parent[path[path.length - 1] as string];
}

function parentOf(document: Record<string, unknown>, path: FieldPath, create: boolean): Record<string, unknown> | undefined {
  let current = document;
  for (const key of path.slice(0, -1)) {
    if (!Object.hasOwn(current, key) && create) current[key] = {};
    const next = current[key];
    if (next === undefined && !create) return undefined;
    if (!isPlainObject(next)) {
      if (!create) return undefined;
      throw new DocumentQueryError(`cannot create field "${path.join('.')}": "${key}" is not an object`);
    }
    current = next;
  }
  return current;
}
