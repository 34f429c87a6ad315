import type { ListedRoute } from '../routes/route-table.ts';

const TEMPLATE_PARAMETER = /^\{(.+)\}$/;

/**
 * Unique `operationId`s, camelCase identifiers a client generator can name methods by. A route
 * that declares one keeps it at its first URL; at another (the default project's
 * `/api/project/...`) the segment that differs precedes it (`listTickets`, `projectListTickets`).
 * Any other is named by its method and URL: `GET /api/shop/items/{id}` is `getShopItemsById`,
 * the same route under the default project's mount `getProjectItemsById`. A name already given
 * gets a number (`getShopItems2`), in the order routes are listed, so names stay the same from
 * one start to the next.
 */
export class OperationIds {
  readonly #given = new Set<string>();

  /** The id of `route` at `template`, the OpenAPI spelling of one of its URLs; `firstTemplate` spells its first. */
  name(route: ListedRoute, template: string, firstTemplate: string): string {
    const wanted = route.operationId === undefined ? derivedName(route, template) : declaredName(route.operationId, template, firstTemplate);
    let name = wanted;
    for (let suffix = 2; this.#given.has(name); suffix += 1) name = `${wanted}${suffix}`;
    this.#given.add(name);
    return name;
  }
}

function declaredName(declared: string, template: string, firstTemplate: string): string {
  const first = firstTemplate.split('/');
  const differing = template.split('/').find((segment, index) => segment !== first[index]);
  if (differing === undefined) return declared;
  const [head = '', ...rest] = wordsOf(differing);
  return [head.toLowerCase(), ...rest, ...wordsOf(declared)].join('');
}

function derivedName(route: ListedRoute, template: string): string {
  const segments = template.split('/').filter(Boolean);
  // Every project URL starts /api/<project>: the project names the operation, /api does not.
  const named = route.kind === 'project' && segments[0] === 'api' ? segments.slice(1) : segments;
  const words = named.flatMap((segment) => {
    const parameter = TEMPLATE_PARAMETER.exec(segment);
    return parameter === null ? wordsOf(segment) : ['By', ...wordsOf(parameter[1])];
  });
  return `${route.method.toLowerCase()}${words.join('')}`;
}

/** `getOneAccount` → `GetOneAccount`, `open-api.json` → `Open`, `Api`, `Json`: letters and digits only. */
function wordsOf(text: string): string[] {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => `${word[0].toUpperCase()}${word.slice(1)}`);
}
