import { DocumentQueryError } from './errors.ts';
import { checkKeysWithin } from './keys.ts';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/**
 * A value as the store keeps it: what `JSON.stringify` makes of it (a Date becomes its ISO
 * string, `undefined` becomes null). Values JSON cannot hold are errors, not silent nulls, and
 * so is a key the key rule refuses (keys.ts), at any depth.
 */
export function toJsonValue(value: unknown, where: string): JsonValue {
  rejectUnstorable(value, where);
  if (value === undefined) return null;
  const json = jsonCopy(value, where);
  checkKeysWithin(json, where);
  return json;
}

function jsonCopy(value: unknown, where: string): JsonValue {
  try {
    return JSON.parse(JSON.stringify(value)) as JsonValue;
  } catch (error) {
    throw new DocumentQueryError(`${where}: ${(error as Error).message}`);
  }
}

/**
 * The value as a document stores it: `toJsonValue`, refusing text that PostgreSQL's jsonb
 * cannot hold (NUL, an unpaired surrogate) with a clear error rather than a database failure.
 */
export function toStorableValue(value: unknown, where: string): JsonValue {
  const json = toJsonValue(value, where);
  if (!isStorable(json)) throw new DocumentQueryError(`${where}: text with NUL (\\u0000) or an unpaired surrogate cannot be stored`);
  return json;
}

const LONE_SURROGATE = /\p{Cs}/u;

/** True when `text` could be stored: jsonb and PostgreSQL text hold neither NUL nor a lone surrogate. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && !LONE_SURROGATE.test(text);
}

/** True when every string and key inside `value` could be stored. */
export function isStorable(value: JsonValue): boolean {
  if (typeof value === 'string') return isStorableText(value);
  if (value === null || typeof value !== 'object') return true;
  if (Array.isArray(value)) return value.every(isStorable);
  return Object.entries(value).every(([key, child]) => isStorableText(key) && isStorable(child));
}

function rejectUnstorable(value: unknown, where: string): void {
  const type = typeof value;
  if (type === 'function' || type === 'symbol' || type === 'bigint') throw new DocumentQueryError(`${where}: a ${type} cannot be stored`);
  if (type === 'number' && !Number.isFinite(value)) throw new DocumentQueryError(`${where}: ${String(value)} cannot be stored`);
  if (value instanceof RegExp) throw new DocumentQueryError(`${where}: regular expressions are not supported`);
}

export type Scalar = string | number | boolean;

export function isScalar(value: JsonValue): value is Scalar {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/**
 * A scalar written as a SQL/JSON path literal. JSON's escaping is valid jsonpath escaping, so a
 * string cannot end its literal early; the whole path still travels as a bound parameter.
 */
export function jsonPathLiteral(value: Scalar | null): string {
  return JSON.stringify(value);
}
