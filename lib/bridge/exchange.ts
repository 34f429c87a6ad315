import type { Context } from 'koa';
import { BridgeRequest } from './request.ts';
import { BridgeResponse } from './response.ts';

/** The bridged pair of one request: custom auth and handler share them, as Express's chain does. */
export interface Exchange {
  readonly req: BridgeRequest;
  readonly res: BridgeResponse;
}

const exchanges = new WeakMap<Context, Exchange>();

/** The request's `req`/`res`, made on first use. */
export function exchangeFor(context: Context): Exchange {
  const existing = exchanges.get(context);
  if (existing) return existing;
  const res = new BridgeResponse(context);
  const req = new BridgeRequest(context, res);
  res.req = req;
  const exchange = { req, res };
  exchanges.set(context, exchange);
  return exchange;
}
