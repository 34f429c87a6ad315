import { AsyncLocalStorage } from 'node:async_hooks';
import type { Context } from 'koa';
import type { Runtime } from './runtime.ts';

/** The authenticated caller: the claims of its verified system JWT (SPEC §5.3). */
export interface Caller {
  readonly uid: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Express's `req.route`: the route as declared, one frozen object per route. */
export interface ExpressRoute {
  readonly path: string;
  /** The declared method in lower case, as Express's `Route#methods` (`{ get: true }`). */
  readonly methods: Readonly<Record<string, true>>;
}

/** The route answering the request, as its router found it. */
export interface RouteMatch {
  /** The project whose route it is; none for the service's own routes. */
  readonly project: string | undefined;
  /** `GET /orders/:id`: how log lines name the route. */
  readonly name: string;
  readonly route: ExpressRoute;
  /** The mount as it appeared in the URL (`/api/sample`): Express's `req.baseUrl`. */
  readonly baseUrl: string;
  /** `req.params`, decoded the way Express's router decodes them; one object for the whole route. */
  readonly params: Record<string, string | string[]>;
  /** Where `next('route')` leads: the next route matching the URL, skipping the rest of this one. */
  readonly nextRoute: () => Promise<void>;
  /** Where `next('router')` leads: past every route of the router. */
  readonly leaveRouter: () => Promise<void>;
  /** Query parameters the route declares a credential in (`security`): the log line keeps their names only. */
  readonly credentialQuery: ReadonlySet<string>;
}

/**
 * Everything one request carries: made by the entry (`lib/http/entry.ts`), the store of its async
 * context, so the data layer reads the tenant here too (SPEC §4.2). Other layers add typed parts
 * (the bridge's `exchange`) by augmenting this interface.
 */
export interface RequestState {
  readonly requestId: string;
  /** Who chose `requestId`: the caller (a well-formed `X-Request-Id`) or the service; none outside a request. */
  readonly requestIdFrom: RequestIdSource | undefined;
  /** The service serving it: what the facilities a handler imports work against. */
  readonly runtime: Runtime | undefined;
  /** Set by the tenant step; every data access of the request is confined to it. */
  tenant: string | undefined;
  caller: Caller | undefined;
  route: RouteMatch | undefined;
  /** A body is read once: a later route reached with `next()` finds it parsed (Express's `req._body`). */
  bodyRead: boolean;
  /** What went wrong, as the request's log line tells it: the error answer's text, or the client leaving. */
  failure: string | undefined;
  /** The client left before the answer was complete. */
  abandoned: boolean;
  /**
   * Answered with an error (504, 408, a failure) while its handler may still work: a transaction
   * that work has open is rolled back, so an error answer never hides a change.
   */
  givenUp: boolean;
  /** Answer sent, client left or connection broken: open transactions roll back, `db` refuses more (SPEC §17.1). */
  ended: boolean;
}

/** Where a request's id came from (SPEC §2.4): the caller's own, kept when well formed, or the service's. */
export type RequestIdSource = 'caller' | 'service';

/** How a record keeps its request id's source (SPEC §17.5); null outside a request. */
export function idChosenByCaller(request: RequestState | undefined): boolean | null {
  return request?.requestIdFrom === undefined ? null : request.requestIdFrom === 'caller';
}

/** The source a record kept; null outside a request, and for records older than the sources. */
export function requestIdSourceOf(chosenByCaller: boolean | null): RequestIdSource | null {
  if (chosenByCaller === null) return null;
  return chosenByCaller ? 'caller' : 'service';
}

const KEY = 'spaceport';
const context = new AsyncLocalStorage<RequestState>();

export function newRequestState(requestId: string, runtime: Runtime | undefined, tenant?: string, requestIdFrom?: RequestIdSource): RequestState {
  return { requestId, requestIdFrom, runtime, tenant, caller: undefined, route: undefined, bodyRead: false, failure: undefined, abandoned: false, givenUp: false, ended: false };
}

/** Puts `state` under its key of `ctx.state` and runs `work` with it as the current request. */
export function serveWithState<Result>(ctx: Pick<Context, 'state'>, state: RequestState, work: () => Result): Result {
  (ctx.state as Record<string, RequestState>)[KEY] = state;
  return context.run(state, work);
}

/** The state of the request `ctx` stands for; the entry made it before any step ran. */
export function requestState(ctx: Pick<Context, 'state'>): RequestState {
  const state = (ctx.state as Record<string, RequestState | undefined>)[KEY];
  if (state === undefined) throw new Error('no request state: the request did not come through the entry');
  return state;
}

/** The fields naming a request on a log line about it: its id, and its project and route once routed. */
export function requestPlace({ requestId, route }: RequestState): { requestId: string; project?: string; route?: string } {
  return route === undefined ? { requestId } : { requestId, project: route.project, route: route.name };
}

/** The request being served by this async context, if any. */
export function currentRequest(): RequestState | undefined {
  return context.getStore();
}

/** Runs `work` in no request's async context: what it starts (timers, promises) belongs to none either. */
export function outsideRequests<Result>(work: () => Result): Result {
  return context.exit(work);
}

/** Runs `work` as part of `state`'s request, whatever async context it is called from. */
export function runInRequest<Result>(state: RequestState, work: () => Result): Result {
  return context.getStore() === state ? work() : context.run(state, work);
}
