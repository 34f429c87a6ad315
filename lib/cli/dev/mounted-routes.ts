const METHODS = ['get', 'post', 'put', 'delete'];

interface Operation {
  readonly 'x-spaceport-auth'?: string;
}

/**
 * The project routes an instance mounted, read from its own `/openapi.json`: `GET /api/shop/items/{id} (system)`.
 * The default project's `/api/project/...` twins are left out, they add nothing.
 */
export async function mountedRoutes(url: string): Promise<string[]> {
  const response = await fetch(new URL('/openapi.json', url));
  const { paths } = (await response.json()) as { paths: Record<string, Record<string, Operation>> };
  return Object.entries(paths)
    .filter(([path]) => path.startsWith('/api/') && !path.startsWith('/api/project/'))
    .flatMap(([path, item]) =>
      METHODS.filter((method) => item[method] !== undefined).map((method) => `${method.toUpperCase()} ${path} (${item[method]['x-spaceport-auth'] ?? 'system'})`),
    );
}
