import type { BridgeRequest } from './request.ts';
import type { BridgeResponse } from './response.ts';

/** Express's `next`: no argument (or `'route'`/`'router'`) continues the chain, anything else fails it. */
export type NextFunction = (error?: unknown) => void;

/** A project route's function or custom auth: Express-style, synchronous or async. */
export type RouteHandler = (req: BridgeRequest, res: BridgeResponse, next: NextFunction) => unknown;
