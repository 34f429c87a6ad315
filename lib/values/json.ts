import { deepFreeze } from './deep-freeze.ts';

/** A JSON value: what a document holds, and what a JSON Schema and the OpenAPI document are made of. */
export type Json = null | boolean | number | string | readonly Json[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: Json;
}

/** An object literal's kind of object (`{}`, `JSON.parse`, `Object.create(null)`), not an array, a Date or a class instance. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

/** A deep, frozen JSON copy of `value`: what JSON cannot hold (functions, undefined) is left out. */
export function frozenJson(value: object): JsonObject {
  return deepFreeze(JSON.parse(JSON.stringify(value)) as JsonObject);
}
