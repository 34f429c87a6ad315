import type { RouteHandler } from '../bridge/index.ts';
import type { CompiledRouteSchema } from './schemas.ts';
import type { AuthMode } from './types.ts';

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** What a route file declares for `function` and `auth`: an Express-style `(req, res, next)`. */
export type RouteFunction = RouteHandler;

/** One route of a route file, after validation. */
export interface RouteDefinition {
  readonly method: HttpMethod;
  readonly path: string;
  readonly handler: RouteFunction;
  readonly skipAuth: boolean;
  readonly auth: RouteFunction | undefined;
  readonly summary: string | undefined;
  readonly description: string | undefined;
  readonly tags: readonly string[];
  /** The declared request and answer schemas, compiled; undefined when none is declared. */
  readonly schema: CompiledRouteSchema | undefined;
}

/** A project whose route file loaded and validated. */
export interface ProjectDefinition {
  readonly name: string;
  /** Absolute path of its route file. */
  readonly file: string;
  readonly routes: readonly RouteDefinition[];
}

/** Custom `auth` wins over `skipAuth`, even `skipAuth: true`: the route runs its `auth`, and system authentication is skipped. */
export function authModeOf(route: Pick<RouteDefinition, 'skipAuth' | 'auth'>): AuthMode {
  if (route.auth !== undefined) return 'custom';
  return route.skipAuth ? 'public' : 'system';
}
