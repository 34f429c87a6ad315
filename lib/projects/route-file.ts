import type { RouteHandler } from '../bridge/index.ts';
import { LONGEST_TIMEOUT_MS } from '../config/schema.ts';
import type { AuthMode, RateLimitKey, RouteDeclaration, RouteRateLimit } from '../routes/declaration.ts';
import { JsonSchemaCompiler } from '../routes/json-schema.ts';
import { HTTP_METHODS, type HttpMethod } from '../routes/methods.ts';
import { pathPattern } from '../routes/router.ts';
import { checkEntries, type CheckedEntry } from './entries.ts';
import type { RouteProblem } from './problems.ts';
import { readRouteSecurity } from './route-security.ts';
import { unknownPropertyProblems } from '../values/did-you-mean.ts';
import { kindOf } from '../values/kind-of.ts';
import { readRouteSchema } from '../routes/schemas.ts';

const KNOWN_PROPERTIES = ['method', 'path', 'function', 'skipAuth', 'auth', 'middleware', 'rawBody', 'rateLimit', 'summary', 'description', 'tags', 'operationId', 'schema', 'security'];
/** What a client generator can name a method by. */
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const RATE_LIMIT_PROPERTIES = ['max', 'windowMs', 'by'];
const RATE_LIMIT_KEYS = ['ip', 'user'];

/** A project route: its file's entry, validated into the declaration every route of the service shares. */
export type ProjectRoute = RouteDeclaration<RouteHandler>;

export interface ValidatedRoutes {
  readonly routes: readonly ProjectRoute[];
  readonly problems: readonly RouteProblem[];
}

/** Checks a route file's default export, an array of route objects (SPEC §8.1), collecting every problem. */
export function validateRoutes(project: string, file: string, exported: unknown): ValidatedRoutes {
  const compiler = new JsonSchemaCompiler();
  const { entries, problems } = checkEntries(project, file, exported, {
    plural: 'routes',
    check: (candidate) => checkRoute(project, candidate, compiler),
    uniqueKeys: (route) => [
      [`${route.method} ${matchingKey(route.path)}`, (first) => `same method and path as route #${first} (case, a trailing slash and parameter names do not count)`],
      [route.operationId, (first) => `same operationId as route #${first}`],
    ],
    problem: (candidate, index, reason) => {
      const { method, path } = isRecord(candidate) ? candidate : { method: undefined, path: undefined };
      return { project, source: { file }, route: { index, method, path }, reason };
    },
  });
  return { routes: entries, problems };
}

function checkRoute(project: string, candidate: unknown, compiler: JsonSchemaCompiler): CheckedEntry<ProjectRoute> {
  const reasons = problemsOfRoute(candidate);
  if (!isRecord(candidate)) return { reasons };
  const declared = candidate.schema === undefined ? undefined : readRouteSchema(candidate.schema, compiler, pathParameterNames(candidate.path));
  reasons.push(...(declared?.problems ?? []));
  const security = readRouteSecurity(candidate.security, typeof candidate.auth === 'function');
  reasons.push(...security.problems);
  return reasons.length > 0 ? { reasons } : { reasons, entry: declarationOf(project, candidate, declared?.schema, security.schemes) };
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
  reasons.push(...middlewareProblems(candidate.middleware));
  if (candidate.rawBody !== undefined && typeof candidate.rawBody !== 'boolean') reasons.push(`rawBody must be a boolean (got ${kindOf(candidate.rawBody)})`);
  reasons.push(...rateLimitProblems(candidate.rateLimit));
  reasons.push(...documentationProblems(candidate));
  reasons.push(...unknownPropertyProblems(candidate, KNOWN_PROPERTIES, ''));
  return reasons;
}

function rateLimitProblems(rateLimit: unknown): string[] {
  if (rateLimit === undefined) return [];
  if (!isRecord(rateLimit)) return [`rateLimit must be an object {max, windowMs, by} (got ${kindOf(rateLimit)})`];
  const reasons: string[] = [];
  if (!Number.isSafeInteger(rateLimit.max) || (rateLimit.max as number) <= 0) reasons.push(`rateLimit.max must be a positive integer (got ${describe(rateLimit.max)})`);
  // Bounded as the expert file's windows are.
  const windowMs = rateLimit.windowMs;
  if (!Number.isSafeInteger(windowMs) || (windowMs as number) <= 0 || (windowMs as number) > LONGEST_TIMEOUT_MS) {
    reasons.push(`rateLimit.windowMs must be a whole number of milliseconds from 1 to ${LONGEST_TIMEOUT_MS} (got ${describe(windowMs)})`);
  }
  if (!RATE_LIMIT_KEYS.includes(rateLimit.by as string)) reasons.push(`rateLimit.by must be "ip" or "user" (got ${describe(rateLimit.by)})`);
  reasons.push(...unknownPropertyProblems(rateLimit, RATE_LIMIT_PROPERTIES, 'rateLimit.'));
  return reasons;
}

function describe(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string' ? JSON.stringify(value) : kindOf(value);
}

function middlewareProblems(middleware: unknown): string[] {
  if (middleware === undefined) return [];
  if (!Array.isArray(middleware)) return [`middleware must be an array of functions (got ${kindOf(middleware)})`];
  return middleware.flatMap((step: unknown, index) => (typeof step === 'function' ? [] : [`middleware[${index}] must be a function (got ${kindOf(step)})`]));
}

/** `summary`, `description`, `tags` and `operationId`: what `/openapi.json` shows of the route. */
function documentationProblems({ summary, description, tags, operationId }: Record<string, unknown>): string[] {
  const reasons: string[] = [];
  if (operationId !== undefined && !(typeof operationId === 'string' && IDENTIFIER.test(operationId))) {
    reasons.push(`operationId must be an identifier: letters, digits, _ and $, not starting with a digit (got ${describe(operationId)})`);
  }
  if (summary !== undefined && typeof summary !== 'string') reasons.push(`summary must be a string (got ${kindOf(summary)})`);
  if (description !== undefined && typeof description !== 'string') reasons.push(`description must be a string (got ${kindOf(description)})`);
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((tag) => typeof tag === 'string' && tag !== ''))) {
    reasons.push(`tags must be an array of non-empty strings (got ${kindOf(tags)})`);
  }
  return reasons;
}

/**
 * `skipAuth` is a public route with the public rate limit unless it declares its own; a custom
 * `auth` wins over `skipAuth: true` (it runs, rate-limited, and system authentication is skipped).
 */
function declarationOf(project: string, route: Record<string, unknown>, schema: ProjectRoute['schema'], security: ProjectRoute['security']): ProjectRoute {
  const method = (route.method as string).toUpperCase() as HttpMethod;
  const path = route.path as string;
  const authenticate = route.auth as RouteHandler | undefined;
  return Object.freeze({
    method,
    path,
    auth: authModeOf(authenticate, route.skipAuth === true),
    authenticate,
    rateLimit: rateLimitOf(route, `${project} ${method} ${path}`),
    handler: route.function as RouteHandler,
    middleware: Object.freeze([...((route.middleware as RouteHandler[] | undefined) ?? [])]),
    rawBody: route.rawBody === true,
    schema,
    summary: route.summary as string | undefined,
    description: route.description as string | undefined,
    tags: Object.freeze([...((route.tags as string[] | undefined) ?? [])]),
    operationId: route.operationId as string | undefined,
    security,
  });
}

function authModeOf(authenticate: RouteHandler | undefined, skipAuth: boolean): AuthMode {
  if (authenticate !== undefined) return 'custom';
  return skipAuth ? 'public' : 'system';
}

function rateLimitOf({ rateLimit, skipAuth }: Record<string, unknown>, scope: string): RouteRateLimit | undefined {
  if (rateLimit === undefined) return skipAuth === true ? { name: 'public', by: 'ip' } : undefined;
  const { max, windowMs, by } = rateLimit as { max: number; windowMs: number; by: RateLimitKey };
  return { name: 'route', max, windowMs, by, scope };
}

/** The router's own parser decides, on the pattern it will register: what validates is what mounts. */
function pathSyntaxProblem(path: string): string | undefined {
  try {
    pathPattern(path);
    return undefined;
  } catch (error) {
    return (error as Error).message.replace(/; visit https?:\/\/\S+ for info$/, '');
  }
}

/** One key for two paths the router matches alike: its compiled pattern, lower-cased, has no parameter names. */
function matchingKey(path: string): string {
  return pathPattern(path).regexp.source.toLowerCase();
}

/** The names of a path's parameters (`/items/:id` → `id`); none known for an invalid path. */
function pathParameterNames(path: unknown): string[] | undefined {
  if (typeof path !== 'string' || !path.startsWith('/') || pathSyntaxProblem(path) !== undefined) return undefined;
  return [...pathPattern(path).parameters];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
