import createError from 'http-errors';
import type { Context } from 'koa';
import { BridgeRequest } from './request.ts';
import { BridgeResponse } from './response.ts';

/** The bridged pair of one request: custom auth and handler share them, as Express's chain does. */
export interface Exchange {
  readonly req: BridgeRequest;
  readonly res: BridgeResponse;
}

const exchanges = new WeakMap<Context, Exchange>();

/** The request's `req`/`res`, made on first use; a parameter with a bad escape is 400, as in Express. */
export function exchangeFor(context: Context): Exchange {
  const existing = exchanges.get(context);
  if (existing) return existing;
  rejectUndecodableParams(context);
  const res = new BridgeResponse(context);
  const req = new BridgeRequest(context, res);
  res.req = req;
  const exchange = { req, res };
  exchanges.set(context, exchange);
  return exchange;
}

/**
 * @koa/router leaves a parameter it cannot decode as it was in the URL, where Express's router
 * answers 400. Such a value still fails to decode and appears verbatim in the raw path.
 */
function rejectUndecodableParams(context: Context): void {
  const params = (context as Context & { params?: Record<string, unknown> }).params ?? {};
  for (const value of Object.values(params)) {
    if (typeof value === 'string' && value.includes('%') && !decodes(value) && context.path.includes(value)) {
      throw createError(400, `Failed to decode param '${value}'`);
    }
  }
}

function decodes(value: string): boolean {
  try {
    decodeURIComponent(value);
    return true;
  } catch {
    return false;
  }
}
