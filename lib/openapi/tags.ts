import type { ListedRoute } from '../routes/route-table.ts';
import type { JsonObject } from './components.ts';

const SERVICE_TAGS: Readonly<Record<string, string>> = {
  system: 'Health and this document; no tenant.',
  auth: 'System authentication.',
  spaces: 'Named groups of schemas (internal beta, behind `spaces.enabled`).',
  audit: "The tenant's record of space and account changes (admin).",
};

/** The tags the operations use, each described: the service's areas, then each project's and the tags routes declare. */
export function tagsOf(routes: readonly ListedRoute[]): JsonObject[] {
  const projects = new Set(routes.flatMap((route) => (route.project === undefined ? [] : [route.project])));
  const used = new Set(routes.flatMap(operationTags));
  const describe = (name: string) => SERVICE_TAGS[name] ?? (projects.has(name) ? `Routes of project ${name}, under /api/${name}.` : `Routes tagged ${name}.`);
  const ordered = [...Object.keys(SERVICE_TAGS).filter((name) => used.has(name)), ...[...used].filter((name) => !Object.hasOwn(SERVICE_TAGS, name))];
  return ordered.map((name) => ({ name, description: describe(name) }));
}

/** A route's own tags, or its project's name (the service's own routes: `system`), so the docs page groups it. */
export function operationTags(route: ListedRoute): readonly string[] {
  return route.tags !== undefined && route.tags.length > 0 ? route.tags : [route.project ?? 'system'];
}
