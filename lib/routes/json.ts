/** A JSON value: what a JSON Schema, and the OpenAPI document embedding it, are made of. */
export type Json = string | number | boolean | null | readonly Json[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: Json;
}

/** A deep, frozen JSON copy of `value`: what JSON cannot hold (functions, undefined) is left out. */
export function frozenJson(value: object): JsonObject {
  return deepFreeze(JSON.parse(JSON.stringify(value)) as JsonObject);
}

function deepFreeze<Value>(value: Value): Value {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
