import { isDeepStrictEqual } from 'node:util';
import type { Json, JsonObject } from './components.ts';

/** Component names OpenAPI allows. */
const UNSAFE_NAME_CHARACTERS = /[^A-Za-z0-9._-]+/g;

/**
 * The schemas routes declare, kept under `components.schemas` so each appears once however
 * many URLs its route answers at. A schema's own references (`#/$defs/Line`, as zod writes a
 * recursive or shared type) point inside it; once it moves into the document they are rebased
 * to its place there (`#/components/schemas/<name>/$defs/Line`), so they stay valid wherever a
 * part of it (one query parameter's schema) is copied.
 */
export class SchemaComponents {
  readonly #schemas: Record<string, JsonObject> = {};

  /**
   * Adds `schema` under a name made from `parts` and returns it with its references rebased. A
   * schema already added under that very name (one answer of several routes) is shared.
   */
  add(parts: readonly string[], schema: JsonObject): { readonly name: string; readonly schema: JsonObject } {
    const wanted = parts.map((part) => part.replace(UNSAFE_NAME_CHARACTERS, '_')).filter(Boolean).join('.');
    const known = this.#schemas[wanted];
    if (known !== undefined && isDeepStrictEqual(known, rebaseReferences(schema, `#/components/schemas/${wanted}`))) return { name: wanted, schema: known };
    const name = this.#uniqueName(wanted);
    const rebased = rebaseReferences(schema, `#/components/schemas/${name}`) as JsonObject;
    this.#schemas[name] = rebased;
    return { name, schema: rebased };
  }

  get schemas(): Readonly<Record<string, JsonObject>> {
    return this.#schemas;
  }

  #uniqueName(wanted: string): string {
    let name = wanted;
    for (let suffix = 2; name in this.#schemas; suffix += 1) name = `${wanted}_${suffix}`;
    return name;
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
