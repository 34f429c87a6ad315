/**
 * The Express bridge (SPEC §10): project handlers and custom auth get Express 5's `req`/`res`,
 * built over Koa's `ctx`.
 */
import type { BridgeRequest as Request } from './request.ts';
import type { BridgeResponse } from './response.ts';

export { bodyParsers, type BodyParserOptions } from './body-parsers.ts';
export { bridgeHandler, type RouteHandler } from './handler.ts';
export type { BridgeResponse } from './response.ts';
export type { UploadedFile, UploadedFiles } from './uploads.ts';
export type { NextFunction } from './types.ts';

/** The `req` of a bridged function, its `res` being the bridged response. */
export type BridgeRequest = Request<BridgeResponse>;
