import { DocumentQueryError } from './errors.ts';

/**
 * Refused in paths (it names the prototype) and in stored values (read back, `Object.assign` or a deep merge turns it
 * into a prototype write). `constructor` and `prototype` stay data: the store walks own properties only (paths.ts).
 */
const REFUSED_KEY = '__proto__';

export function checkKey(key: string, where: string, path: string): void {
  if (key === REFUSED_KEY) throw refused(where, path);
}

export function checkKeysWithin(value: unknown, where: string): void {
  const found = refusedKeyPath(value);
  if (found !== undefined) throw refused(where, found.join('.'));
}

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
