import { isDeepStrictEqual } from 'node:util';
import { componentName, firstFreeName, type Json, type JsonObject } from './components.ts';

/**
 * Declared schemas, each once however many URLs its route answers at. A schema's own references
 * (`#/$defs/Line`, as zod writes them) are rebased to its place in the document, so they stay
 * valid wherever a part of it (one query parameter's schema) is copied.
 */
export class SchemaComponents {
  readonly #schemas: Record<string, JsonObject> = {};

  /** Adds `schema`, references rebased; one already added under that very name (one answer of several routes) is shared. */
  add(parts: readonly string[], schema: JsonObject): { readonly name: string; readonly schema: JsonObject } {
    const wanted = parts.map(componentName).filter(Boolean).join('.');
    const known = this.#schemas[wanted];
    if (known !== undefined && isDeepStrictEqual(known, rebaseReferences(schema, `#/components/schemas/${wanted}`))) return { name: wanted, schema: known };
    const name = firstFreeName(wanted, (candidate) => candidate in this.#schemas);
    const rebased = rebaseReferences(schema, `#/components/schemas/${name}`) as JsonObject;
    this.#schemas[name] = rebased;
    return { name, schema: rebased };
  }

  get schemas(): Readonly<Record<string, JsonObject>> {
    return this.#schemas;
  }
}

/** Rewrites `$ref: "#..."` to `${base}...`, except inside a resource with its own `$id`. */
function rebaseReferences(value: Json, base: string): Json {
  if (Array.isArray(value)) return value.map((item: Json) => rebaseReferences(item, base));
  if (value === null || typeof value !== 'object') return value;
  const object = value as JsonObject;
  if (typeof object.$id === 'string') return object;
  return Object.fromEntries(
    Object.entries(object).map(([key, child]) => {
      if (key === '$ref' && typeof child === 'string' && child.startsWith('#')) return [key, `${base}${child.slice(1)}`];
      return [key, rebaseReferences(child, base)];
    }),
  );
}
