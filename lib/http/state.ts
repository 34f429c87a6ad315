import type { Context } from 'koa';

/** Per-request state, kept under one key of `ctx.state`. */
export interface RequestState {
  requestId: string;
  tenant?: string;
  /** The authenticated account's id (system JWT `uid` claim). */
  uid?: string;
  /** For project routes: the mount prefix as it appeared in the URL (`/api/sample`), Express's `req.baseUrl`. */
  baseUrl?: string;
  /** The verified system JWT claims. */
  claims?: Readonly<Record<string, unknown>>;
  /** For project routes: which route is answering, named in the request's error log lines. */
  answeredBy?: { readonly project: string; readonly route: string };
}

const KEY = 'spaceport';

export function requestState(ctx: Pick<Context, 'state'>): RequestState {
  const state = ctx.state as Record<string, RequestState | undefined>;
  let own = state[KEY];
  if (own === undefined) {
    own = { requestId: '' };
    state[KEY] = own;
  }
  return own;
}
