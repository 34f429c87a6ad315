import { describeRateLimit, type ListedRoute } from '../../routes/route-table.ts';

const METHODS = ['get', 'post', 'put', 'delete'];

interface Operation {
  readonly 'x-spaceport-auth'?: string;
  readonly 'x-spaceport-rate-limit'?: ListedRoute['ownRateLimit'];
}

type Paths = Readonly<Record<string, Readonly<Record<string, Operation>>>>;

/** From the instance's `/openapi.json`: `POST /api/shop/report (system, 10/60s by user)`; `/api/project/...` twins left out. */
export async function mountedRoutes(url: string): Promise<string[]> {
  const response = await fetch(new URL('/openapi.json', url), { signal: AbortSignal.timeout(5000) });
  const { paths } = (await response.json()) as { paths: Paths };
  return projectRouteLines(paths);
}

/** The project operations of an OpenAPI document's `paths`, with auth and own rate limit as `make routes` writes them. */
export function projectRouteLines(paths: Paths): string[] {
  return Object.entries(paths)
    .filter(([path]) => path.startsWith('/api/') && !path.startsWith('/api/project/'))
    .flatMap(([path, item]) => METHODS.filter((method) => item[method] !== undefined).map((method) => `${method.toUpperCase()} ${path} (${authCell(item[method])})`));
}

function authCell(operation: Operation): string {
  const auth = operation['x-spaceport-auth'] ?? 'system';
  const limit = operation['x-spaceport-rate-limit'];
  return limit === undefined ? auth : `${auth}, ${describeRateLimit(limit)}`;
}
