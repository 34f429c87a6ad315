import Router from '@koa/router';
import { HTTP_METHODS, type HttpMethod, type RouteDefinition, type RouteFunction } from './definition.ts';
import { looseRoutePath } from './params.ts';
import { kindOf, type RouteProblem } from './report.ts';

const KNOWN_PROPERTIES = new Set(['method', 'path', 'function', 'skipAuth', 'auth']);

export interface ValidatedRoutes {
  readonly routes: readonly RouteDefinition[];
  readonly problems: readonly RouteProblem[];
}

/** Checks a route file's default export (seed §2.4, SPEC §8.1), collecting every problem. */
export function validateRoutes(project: string, file: string, exported: unknown): ValidatedRoutes {
  if (!Array.isArray(exported)) {
    const reason = exported === undefined ? 'has no default export (an array of routes)' : `the default export must be an array of routes (got ${kindOf(exported)})`;
    return { routes: [], problems: [{ project, file, reason }] };
  }
  const routes: RouteDefinition[] = [];
  const problems: RouteProblem[] = [];
  const seen = new Map<string, number>();
  exported.forEach((candidate: unknown, index) => {
    const reasons = problemsOfRoute(candidate);
    if (reasons.length === 0) {
      const route = definitionOf(candidate as Record<string, unknown>);
      const key = `${route.method} ${matchingKey(route.path)}`;
      const first = seen.get(key);
      if (first === undefined) seen.set(key, index);
      else reasons.push(`same method and path as route #${first} (case, a trailing slash and parameter names do not count)`);
      routes.push(route);
    }
    const { method, path } = isRecord(candidate) ? candidate : { method: undefined, path: undefined };
    for (const reason of reasons) problems.push({ project, file, route: { index, method, path }, reason });
  });
  return { routes, problems };
}

function problemsOfRoute(candidate: unknown): string[] {
  if (!isRecord(candidate)) return [`a route must be an object (got ${kindOf(candidate)})`];
  const reasons: string[] = [];
  const { method, path, skipAuth, auth } = candidate;
  if (method === undefined) reasons.push('method is missing');
  else if (typeof method !== 'string' || !HTTP_METHODS.includes(method.toUpperCase() as HttpMethod)) {
    reasons.push(`method must be one of ${HTTP_METHODS.join(', ')}`);
  }
  if (path === undefined) reasons.push('path is missing');
  else if (typeof path !== 'string' || !path.startsWith('/')) reasons.push('path must be a string starting with "/"');
  else {
    const syntaxProblem = pathSyntaxProblem(path);
    if (syntaxProblem !== undefined) reasons.push(`path is not a valid route pattern (${syntaxProblem})`);
  }
  if (!('function' in candidate) || candidate.function === undefined) reasons.push('function is missing');
  else if (typeof candidate.function !== 'function') reasons.push(`function must be a function (got ${kindOf(candidate.function)})`);
  if (skipAuth !== undefined && typeof skipAuth !== 'boolean') reasons.push(`skipAuth must be a boolean (got ${kindOf(skipAuth)})`);
  if (auth !== undefined && typeof auth !== 'function') reasons.push(`auth must be a function (got ${kindOf(auth)})`);
  for (const key of Object.keys(candidate)) {
    if (!KNOWN_PROPERTIES.has(key)) reasons.push(`unknown property "${key}"`);
  }
  return reasons;
}

function definitionOf(route: Record<string, unknown>): RouteDefinition {
  return Object.freeze({
    method: (route.method as string).toUpperCase() as HttpMethod,
    path: route.path as string,
    handler: route.function as RouteFunction,
    skipAuth: route.skipAuth === true,
    auth: route.auth as RouteFunction | undefined,
  });
}

/** The router's own parser decides, on the pattern it will register: what validates is what mounts. */
function pathSyntaxProblem(path: string): string | undefined {
  try {
    compiledPattern(path);
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/; visit https?:\/\/\S+ for info$/, '');
  }
}

/**
 * Two paths get one key when the router matches them alike: the key is the pattern the router
 * compiles (case-insensitive, so lower-cased), in which parameter names no longer appear.
 */
export function matchingKey(path: string): string {
  return compiledPattern(path).source.toLowerCase();
}

function compiledPattern(path: string): RegExp {
  const router = new Router();
  router.register(looseRoutePath(path), ['GET'], () => {});
  return router.stack[0].regexp;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
