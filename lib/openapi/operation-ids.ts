import type { ListedRoute } from '../routes/route-table.ts';
import { firstFreeName } from './components.ts';

const TEMPLATE_PARAMETER = /^\{(.+)\}$/;

/**
 * Unique camelCase `operationId`s. A declared one is kept at the route's first URL; at another
 * (`/api/project/...`) the differing segment precedes it (`projectListTickets`). Any other is
 * named by method and URL (`GET /api/shop/items/{id}`: `getShopItemsById`); a taken name gets a number.
 */
export class OperationIds {
  readonly #given = new Set<string>();

  /** The id of `route` at `template`, the OpenAPI spelling of one of its URLs; `firstTemplate` spells its first. */
  name(route: ListedRoute, template: string, firstTemplate: string): string {
    const wanted = route.operationId === undefined ? derivedName(route, template) : declaredName(route.operationId, template, firstTemplate);
    const name = firstFreeName(wanted, (candidate) => this.#given.has(candidate), '');
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
