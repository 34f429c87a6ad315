import type { Context } from 'koa';
import { requestState } from '../core/request-state.ts';
import { Completions } from './completion.ts';
import type { BridgeRequest } from './request.ts';
import { BridgeResponse } from './response.ts';
import type { UploadedFiles } from './uploads.ts';

/** The bridged pair of one request: custom auth and handler share them, as Express's chain does. */
export interface Exchange {
  readonly req: BridgeRequest<BridgeResponse>;
  readonly res: BridgeResponse;
  /** Which bridged function an answer ends: the one running when it is given. */
  readonly completions: Completions;
}

declare module '../core/request-state.ts' {
  interface RequestState {
    /** The request's `req`/`res`, made when a bridged function first needs them. */
    exchange?: Exchange;
    /** `req.files`: set for multipart requests only (null when they carried no file). */
    uploads?: UploadedFiles | null;
  }
}

/** The request's `req`/`res`, made on first use. */
export function exchangeFor(context: Context): Exchange {
  const state = requestState(context);
  if (state.exchange !== undefined) return state.exchange;
  const completions = new Completions();
  const res = new BridgeResponse(context, completions);
  state.exchange = { req: res.req, res, completions };
  return state.exchange;
}
