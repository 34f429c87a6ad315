import type { IncomingMessage } from 'node:http';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import type { BridgeRequest, BridgeResponse, NextFunction, RouteHandler } from '../bridge/index.ts';
import type { HttpMethod } from '../routes/methods.ts';
import type { ValidatorSchema } from '../routes/standard-schema.ts';

export type { ValidatorSchema } from '../routes/standard-schema.ts';
export type { BridgeRequest as Request, BridgeResponse as Response, NextFunction, RouteHandler, UploadedFile } from '../bridge/index.ts';

/**
 * One entry of a route's `middleware`: yours, over the `Request` and `Response` handlers get, or
 * a package's as it is typed, for Node's own request and response (`helmet()`) or for Express's
 * (cookie-parser, compression, passport). All run on the same objects, the bridge's, which carry
 * what Express middleware reads (SPEC §10); the types say so without a cast in the route file.
 * `body` stays the service's own type: only Express's types call it `any`.
 */
export type Middleware = (req: BridgeRequest & Omit<ExpressRequest, 'body'> & IncomingMessage, res: BridgeResponse & ExpressResponse, next: NextFunction) => unknown;

/** A JSON Schema object (draft 2020-12, OpenAPI 3.1's dialect). */
export interface JsonSchema {
  readonly [keyword: string]: unknown;
}

/**
 * What a route declares about its requests and answers. Request schemas are checked after
 * authentication and before the handler: a 400 `{error, errors: [{path, message}]}`, `error`
 * the first problem (`body.text: must be a string`), `errors` every field at fault in params,
 * query and body. Params and query are strings, checked as JSON Schema coerces them (`"5"` is
 * an integer), and the handler still gets them as sent. A multipart body's files are declared
 * in `body` as properties `{type: "string", format: "binary"}` and checked against the files
 * received. Answers are documented, not checked.
 */
export interface RouteSchema {
  params?: JsonSchema | ValidatorSchema;
  query?: JsonSchema | ValidatorSchema;
  body?: JsonSchema | ValidatorSchema;
  /** By status code: `{ 200: {...}, 404: {...} }`. */
  responses?: Readonly<Record<number, JsonSchema | ValidatorSchema>>;
}

/**
 * An OpenAPI security scheme: what a route's custom `auth` reads, which `/docs` then lets a
 * reader type ("Authorize") and send. `x-` extensions are kept.
 */
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
  /**
   * `true` makes the route public (no system JWT), rate-limited by the configuration's
   * `rateLimit.public` budget, shared by every public route, unless the route declares its own.
   */
  skipAuth?: boolean;
  /** Custom authentication: answers the request itself or calls `next()`. Replaces the system JWT. */
  auth?: RouteHandler;
  /**
   * Express-style `(req, res, next)` functions, yours or an Express middleware package's, run in
   * order after authentication, body parsing and the body schema, before `function`. Each may
   * answer, call `next()`, `next(err)` or `next('route')`, or throw, as a handler may.
   */
  middleware?: readonly Middleware[];
  /**
   * Also gives the route `req.rawBody`: the exact bytes of a JSON, urlencoded or text body, as a
   * Buffer (to check a webhook's signature over them); `req.body` is parsed as usual.
   */
  rawBody?: boolean;
  /**
   * The route's own budget, per tenant: at most `max` requests per `windowMs` milliseconds by
   * client IP (checked before authentication) or by `user`, the uid of the system JWT (checked
   * right after it; a route without system authentication counts by IP). Answers carry the
   * `RateLimit-*` headers; past the budget, 429 with `Retry-After`.
   */
  rateLimit?: { max: number; windowMs: number; by: 'ip' | 'user' };
  /** One line for `/openapi.json` and the `/docs` page. */
  summary?: string;
  description?: string;
  /** Groups in the docs page; the project's name when absent. */
  tags?: readonly string[];
  /**
   * The name client generators give the operation (`listTickets`), unique in the file; without
   * one it is made of the method and URL (`getShopTickets`).
   */
  operationId?: string;
  schema?: RouteSchema;
  /**
   * On a route with `auth`: the credential it reads, as an OpenAPI security scheme
   * (`{type: 'apiKey', in: 'header', name: 'x-api-key'}`), or an array of schemes any one of
   * which it accepts. `/openapi.json` lists it and `/docs` lets a reader send it.
   */
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
