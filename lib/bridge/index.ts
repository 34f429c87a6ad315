/** The Express bridge (SPEC §10): Express 5's `req`/`res` over Koa's `ctx`, for handlers and custom auth. */
import type { BridgeRequest as Request } from './request.ts';
import type { BridgeResponse } from './response.ts';

export { bodyParsers, type BodyParserOptions } from './body-parsers.ts';
export { bridgeHandler, type RouteHandler } from './handler.ts';
export type { BridgeResponse } from './response.ts';
export type { UploadedFile, UploadedFiles } from './uploads.ts';
export type { NextFunction } from './types.ts';

/** The `req` of a bridged function, its `res` being the bridged response. */
export type BridgeRequest = Request<BridgeResponse>;
