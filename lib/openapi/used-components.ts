import type { Json, JsonObject } from './components.ts';

const COMPONENT_REFERENCE = /^#\/components\/([^/]+)\/([^/]+)/;

/**
 * `components` with only the entries the document reaches through `$ref`, directly or through
 * another entry. Security schemes are named by requirements, not references: built from the operations.
 */
export function usedComponents(document: JsonObject, components: Readonly<Record<string, JsonObject>>): Record<string, JsonObject> {
  const used = new Map<string, Set<string>>();
  const pending: Json[] = [document];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    for (const reference of references(next)) {
      const [, section, name] = COMPONENT_REFERENCE.exec(reference) ?? [];
      const entry = section === undefined ? undefined : components[section]?.[name];
      if (entry === undefined || used.get(section)?.has(name)) continue;
      used.set(section, (used.get(section) ?? new Set()).add(name));
      pending.push(entry);
    }
  }
  const kept: Record<string, JsonObject> = {};
  for (const [section, entries] of Object.entries(components)) {
    const names = used.get(section);
    const keptEntries = section === 'securitySchemes' ? entries : Object.fromEntries(Object.entries(entries).filter(([name]) => names?.has(name)));
    if (Object.keys(keptEntries).length > 0) kept[section] = keptEntries;
  }
  return kept;
}

/** Every `$ref` string inside `value`. */
function references(value: Json): string[] {
  if (Array.isArray(value)) return value.flatMap(references);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value as JsonObject).flatMap(([key, child]) => (key === '$ref' && typeof child === 'string' ? [child] : references(child)));
}
