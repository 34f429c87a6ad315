import type { IncomingMessage } from 'node:http';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import type { BridgeRequest, BridgeResponse, NextFunction, RouteHandler } from '../bridge/index.ts';
import type { HttpMethod } from '../routes/methods.ts';
import type { ValidatorSchema } from '../routes/standard-schema.ts';

export type { ValidatorSchema } from '../routes/standard-schema.ts';
export type { BridgeRequest as Request, BridgeResponse as Response, NextFunction, RouteHandler, UploadedFile } from '../bridge/index.ts';

/**
 * One entry of a route's `middleware`: yours, or a package's typed for Node's request and
 * response (`helmet()`) or Express's (cookie-parser, passport). All run on the bridge's objects,
 * which carry what Express middleware reads (SPEC §10): no cast needed. `body` stays typed.
 */
export type Middleware = (req: BridgeRequest & Omit<ExpressRequest, 'body'> & IncomingMessage, res: BridgeResponse & ExpressResponse, next: NextFunction) => unknown;

/** A JSON Schema object (draft 2020-12, OpenAPI 3.1's dialect). */
export interface JsonSchema {
  readonly [keyword: string]: unknown;
}

/**
 * A route's requests and answers. Request schemas are checked after authentication, before the
 * handler: a 400 `{error, errors: [{path, message}]}` names every field at fault. Params and query
 * are checked as JSON Schema coerces them (`"5"` is an integer), and reach the handler as sent.
 * Files are `body` properties `{type: "string", format: "binary"}`. Answers are documented, not checked.
 */
export interface RouteSchema {
  params?: JsonSchema | ValidatorSchema;
  query?: JsonSchema | ValidatorSchema;
  body?: JsonSchema | ValidatorSchema;
  /** By status code: `{ 200: {...}, 404: {...} }`. */
  responses?: Readonly<Record<number, JsonSchema | ValidatorSchema>>;
}

/** An OpenAPI security scheme: what a route's custom `auth` reads; `x-` extensions are kept. */
export type SecurityScheme = (
  | { type: 'apiKey'; in: 'header' | 'query' | 'cookie'; name: string }
  | { type: 'http'; scheme: string; bearerFormat?: string }
  | { type: 'mutualTLS' }
  | { type: 'oauth2'; flows: Readonly<Record<string, unknown>> }
  | { type: 'openIdConnect'; openIdConnectUrl: string }
) & { description?: string; readonly [extension: `x-${string}`]: unknown };

/** One entry of a project's `api/routes.js` default export, an array of routes (SPEC §8.1). */
export interface Route {
  /** GET, POST, PUT or DELETE, in any case. A GET route also answers HEAD. */
  method: HttpMethod | Lowercase<HttpMethod>;
  /** Starts with `/`; `:name` is a parameter (`req.params.name`). Matched case-insensitively. */
  path: `/${string}`;
  function: RouteHandler;
  /** `true`: public (no system JWT), under the shared `rateLimit.public` budget unless it declares its own. */
  skipAuth?: boolean;
  /** Custom authentication: answers the request itself or calls `next()`. Replaces the system JWT. */
  auth?: RouteHandler;
  /** `(req, res, next)` functions run in order after authentication, body and body schema, before `function`. */
  middleware?: readonly Middleware[];
  /** Also gives `req.rawBody`, a JSON, urlencoded or text body's exact bytes (for a webhook's signature). */
  rawBody?: boolean;
  /**
   * The route's own budget per tenant: `max` requests per `windowMs` by client IP, or by `user`,
   * the system JWT's uid (without system authentication, by IP). Past it, 429 with `Retry-After`.
   */
  rateLimit?: { max: number; windowMs: number; by: 'ip' | 'user' };
  /** One line for `/openapi.json` and the `/docs` page. */
  summary?: string;
  description?: string;
  /** Groups in the docs page; the project's name when absent. */
  tags?: readonly string[];
  /** Unique in the file (`listTickets`); by default made of the method and URL (`getShopTickets`). */
  operationId?: string;
  schema?: RouteSchema;
  /** With `auth`: the credential it reads, as security schemes (any one accepted), for `/openapi.json` and `/docs`. */
  security?: SecurityScheme | readonly SecurityScheme[];
}

/** Returns `routes` unchanged: it only gives a route file its types. */
export function defineRoutes<const Routes extends readonly Route[]>(routes: Routes): Routes {
  return routes;
}

declare module '../bridge/request.ts' {
  interface BridgeRequest {
    /** On a route declaring `rawBody: true`: the exact bytes of a JSON, urlencoded or text body. */
    rawBody?: Buffer;
  }
}
