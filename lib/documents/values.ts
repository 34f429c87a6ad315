import type { Json } from '../values/json.ts';
import { isStorable } from '../values/storable-text.ts';
import { checkBound } from './bounds.ts';
import { DocumentQueryError } from './errors.ts';
import { checkKeysWithin } from './keys.ts';

/** A value as `JSON.stringify` makes it (a Date its ISO string); what JSON cannot hold, and a refused key (keys.ts), are errors, not silent nulls. */
export function toJsonValue(value: unknown, where: string): Json {
  rejectUnstorable(value, where);
  if (value === undefined) return null;
  // A scalar is its own JSON copy (but -0, which JSON writes as 0): a long `$in` list is mostly
  // scalars, and the round trip below cost 6 µs a value of the event loop.
  if (typeof value === 'number') return value + 0;
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  const json = jsonCopy(value, where);
  checkBound('valueDepth', nestingDepth(json), where);
  checkKeysWithin(json, where);
  return json;
}

/** Levels of objects and arrays in `value` (`{a: []}` has 2), found without recursion: it runs before every walker that recurses. */
function nestingDepth(value: Json): number {
  let deepest = 0;
  const containers: Json[] = [value];
  const depths = [1];
  for (let container = containers.pop(); container !== undefined; container = containers.pop()) {
    const depth = depths.pop() as number;
    if (container === null || typeof container !== 'object') continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(container)) {
      if (child !== null && typeof child === 'object') {
        containers.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return deepest;
}

function jsonCopy(value: unknown, where: string): Json {
  try {
    return JSON.parse(JSON.stringify(value)) as Json;
  } catch (error) {
    throw new DocumentQueryError(`${where}: ${(error as Error).message}`);
  }
}

/** `toJsonValue`, refusing text jsonb cannot hold with a clear error rather than a database failure. */
export function toStorableValue(value: unknown, where: string): Json {
  const json = toJsonValue(value, where);
  if (!isStorable(json)) throw new DocumentQueryError(`${where}: text with NUL (\\u0000) or an unpaired surrogate cannot be stored`);
  return json;
}

function rejectUnstorable(value: unknown, where: string): void {
  const type = typeof value;
  if (type === 'function' || type === 'symbol' || type === 'bigint') throw new DocumentQueryError(`${where}: a ${type} cannot be stored`);
  if (type === 'number' && !Number.isFinite(value)) throw new DocumentQueryError(`${where}: ${String(value)} cannot be stored`);
  if (value instanceof RegExp) throw new DocumentQueryError(`${where}: regular expressions are not supported`);
}

export type Scalar = string | number | boolean;

export function isScalar(value: Json): value is Scalar {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** JSON's escaping is valid jsonpath escaping, so a string cannot end its literal early. */
export function jsonPathLiteral(value: Scalar | null): string {
  return JSON.stringify(value);
}
