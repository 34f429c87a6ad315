/** Where a value breaks its schema, and how: the 400 answer names `path` (SPEC §8.13). */
export interface Violation {
  readonly path: readonly PropertyKey[];
  readonly message: string;
}

/** A request schema compiled at start-up: every violation of `value`, none when it conforms. */
export type SchemaCheck = (value: unknown) => readonly Violation[] | Promise<readonly Violation[]>;

/** `body.items[0].sku`, `query["page size"]`: a field as a route author would write it in JavaScript. */
export function fieldName(part: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((written, key) => written + accessor(key), part);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function accessor(key: PropertyKey): string {
  if (typeof key === 'number' || (typeof key === 'string' && /^\d+$/.test(key))) return `[${String(key)}]`;
  const name = String(key);
  return IDENTIFIER.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`;
}
