/**
 * The Express bridge (SPEC §10): project handlers and custom auth get Express 5's `req`/`res`,
 * built over Koa's `ctx`.
 */
export { bodyParsers, type BodyParserOptions } from './body-parsers.ts';
export { bridgeHandler, type BridgeOptions } from './handler.ts';
export type { BridgeRequest } from './request.ts';
export type { BridgeResponse } from './response.ts';
export type { UploadedFile, UploadedFiles } from './uploads.ts';
export type { NextFunction, RouteHandler } from './types.ts';
/** The names the route-author types use. */
export type { BridgeRequest as BridgedRequest } from './request.ts';
export type { BridgeResponse as BridgedResponse } from './response.ts';
