import { DocumentQueryError } from './errors.ts';
import { parsePath, setAt, valueAt } from './paths.ts';
import type { Filter } from './types.ts';
import { isPlainObject } from '../values/json.ts';
import { toJsonValue } from './values.ts';

/** The document an upsert starts from (MongoDB's rule): the filter's equalities, also inside `$and`; the filter is compiled already, so valid. */
export function upsertSeed(filter: Filter | undefined): Record<string, unknown> {
  const seed: Record<string, unknown> = {};
  addEqualities(seed, filter ?? {});
  return seed;
}

function addEqualities(seed: Record<string, unknown>, filter: Filter): void {
  for (const [key, condition] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(condition)) {
      for (const branch of condition) if (isPlainObject(branch)) addEqualities(seed, branch);
      continue;
    }
    if (key.startsWith('$')) continue;
    const equal = equalityOperand(condition);
    if (equal === undefined) continue;
    const path = parsePath(key, 'upsert');
    if (valueAt(seed, path) !== undefined) throw new DocumentQueryError(`upsert: the filter gives "${key}" twice, so the new document cannot take it`);
    setAt(seed, path, toJsonValue(equal.value, 'upsert'));
  }
}

function equalityOperand(condition: unknown): { value: unknown } | undefined {
  if (!isPlainObject(condition)) return { value: condition };
  const keys = Object.keys(condition);
  if (!keys.some((name) => name.startsWith('$'))) return { value: condition };
  return Object.hasOwn(condition, '$eq') ? { value: condition.$eq } : undefined;
}
