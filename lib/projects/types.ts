import type { Context } from 'koa';
import type { SchemaDocuments } from './schemas.ts';

/** How a project route authenticates (SPEC §8.3). */
export type AuthMode = 'system' | 'public' | 'custom';

/** One mounted project route, as `make routes` and `/openapi.json` describe it. */
export interface MountedRoute {
  readonly project: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The route's own path, as declared (`/items/:id`). */
  readonly path: string;
  /** Every URL it answers at: `/api/<project><path>`, plus `/api/project<path>` for the default. */
  readonly urls: readonly string[];
  readonly auth: AuthMode;
  readonly file: string;
  /** What the route declares about itself for `/openapi.json` (SPEC §8.1). */
  readonly summary?: string;
  readonly description?: string;
  readonly tags?: readonly string[];
  readonly schemas?: SchemaDocuments;
}

export interface LoadedProjects {
  readonly routes: readonly MountedRoute[];
  /** Answers `/api/...` requests: the project's route, or 404/405. */
  readonly area: (ctx: Context) => Promise<void>;
}
