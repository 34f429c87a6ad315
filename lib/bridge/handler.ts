import { AsyncLocalStorage } from 'node:async_hooks';
import createError from 'http-errors';
import type { Context, Middleware } from 'koa';
import onFinished from 'on-finished';
import { answerError } from '../core/errors.ts';
import type { Logger } from '../logger/index.ts';
import { requestPlace, requestState, runInRequest, type RequestState } from '../core/request-state.ts';
import { Completions, type Completion, type Outcome, type PassedTo } from './completion.ts';
import { handlerFailure } from './errors.ts';
import type { BridgeRequest } from './request.ts';
import { BridgeResponse } from './response.ts';
import type { NextFunction } from './types.ts';
import type { UploadedFiles } from './uploads.ts';

/** A project route's function or custom auth: Express-style, synchronous or async. */
export type RouteHandler = (req: BridgeRequest<BridgeResponse>, res: BridgeResponse, next: NextFunction) => unknown;

export interface BridgeOptions {
  /** A function that has neither answered nor called `next` by then gets 504. */
  handlerMs: number;
  logger: Logger;
}

/** Runs an Express-style handler or custom auth, waiting for its answer, `next()` or failure, not its return. */
export function bridgeHandler(handler: RouteHandler, options: BridgeOptions): Middleware {
  return (ctx, next) => {
    const state = requestState(ctx);
    const exchange = exchangeFor(ctx);
    const completion = exchange.completions.begin((attempt, first, error) => reportLate(ctx, options.logger, attempt, first, error));
    exchange.req.next = expressNext(completion, exchange);
    invoke(handler, exchange, completion);
    // Most handlers answer before their function returns: no timer, no listener, no promise.
    const ended = completion.settledOutcome;
    if (ended !== undefined) return conclude(ctx, state, ended, next, options.logger);
    const stopWatching = watchCompletion(ctx, completion, options.handlerMs);
    return completion.outcome.then((outcome) => {
      stopWatching();
      return conclude(ctx, state, outcome, next, options.logger);
    });
  };
}

/** What the chain does once the handler has ended: nothing more, hand on, or answer its failure. */
function conclude(ctx: Context, state: RequestState, outcome: Outcome, next: () => Promise<void>, logger: Logger): Promise<void> | undefined {
  if (outcome.kind === 'passed') return outcome.resume(() => runInRequest(state, () => handOn(state, outcome.to, next)));
  if (outcome.kind === 'failed') {
    // An answer written past Koa (a 205) had Koa stand aside: if it never started, the error
    // answer goes through Koa; if it broke off, it cannot be completed and, as in Express, the
    // socket goes; if it was whole, the answer stands and the failure is only logged.
    if (!ctx.res.headersSent) ctx.respond = true;
    else if (!ctx.res.writableEnded) ctx.res.destroy();
    const res = state.exchange?.res;
    if (res?.wrapped() && !res.headersSent) return answerThroughResponse(ctx, res, outcome.error, logger);
    throw outcome.error;
  }
  return undefined;
}

/** Through `res.writeHead`/`res.end`, so that middleware that replaced them sees the error answer too. */
function answerThroughResponse(ctx: Context, res: BridgeResponse, error: unknown, logger: Logger): Promise<void> {
  requestState(ctx).givenUp = true;
  answerError(ctx, error, logger);
  return res.relayServiceAnswer(ctx.status, JSON.stringify(ctx.body));
}

/**
 * Express's `next`. Express calls the next function from inside `next`, so a store entered
 * around it (`als.run(store, next)`) is seen there: the chain resumes in `next`'s context, yet
 * always as this request (`runInRequest`), keeping its tenant whoever called `next` (SPEC §4.2).
 */
function expressNext(completion: Completion, exchange: Exchange): NextFunction {
  return (error?: unknown) => {
    if (!error) {
      completion.settleOrReport({ kind: 'passed', to: 'chain', resume: AsyncLocalStorage.snapshot() }, 'next()');
    } else if (error === 'route' || error === 'router') {
      completion.settleOrReport({ kind: 'passed', to: error, resume: AsyncLocalStorage.snapshot() }, `next('${error}')`);
    } else {
      completion.settleOrReport({ kind: 'failed', error: handlerFailure(error, exchange.res.statusCode) }, 'next(error)');
    }
  };
}

/** `next('route')` from a custom auth skips the route's handler, as in Express: never falls through to it. */
function handOn(state: RequestState, to: PassedTo, next: () => Promise<void>): Promise<void> {
  const match = state.route;
  if (match === undefined || to === 'chain') return next();
  return to === 'route' ? match.nextRoute() : match.leaveRouter();
}

/** A synchronous throw and a rejected promise fail the handler like `next(error)`. */
function invoke(handler: RouteHandler, exchange: Exchange, completion: Completion): void {
  const fail = (error: unknown) =>
    completion.settleOrReport({ kind: 'failed', error: handlerFailure(error, exchange.res.statusCode) }, 'throw');
  try {
    const result = handler(exchange.req, exchange.res, exchange.req.next);
    if (isThenable(result)) result.then(undefined, fail);
  } catch (error) {
    fail(error);
  }
}

/** Settles the completion when nothing else will: 504 at the time limit, or the response ending. */
function watchCompletion(ctx: Context, completion: Completion, handlerMs: number): () => void {
  const timer = setTimeout(() => {
    if (ctx.res.headersSent) return;
    completion.settle({ kind: 'failed', error: createError(504, 'the handler did not answer in time', { expose: true }) });
  }, handlerMs);
  onFinished(ctx.res, () => {
    completion.settle(ctx.res.writableFinished ? { kind: 'answered' } : { kind: 'closed' });
  });
  return () => clearTimeout(timer);
}

function reportLate(ctx: Context, logger: Logger, attempt: string, first: Outcome | undefined, error: unknown): void {
  if (first?.kind === 'closed') return;
  const state = requestState(ctx);
  const fields = { ...requestPlace(state), attempt, first: first?.kind };
  if (error === undefined) {
    logger.warn(fields, 'bridged handler answered twice; later answer ignored');
    return;
  }
  const cut = state.exchange?.res.cutOff(error) === true;
  const message = cut ? 'bridged handler failed while writing its answer; the answer was cut off' : 'bridged handler failed after answering';
  logger.error({ ...fields, err: error }, message);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as PromiseLike<unknown>).then === 'function';
}

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
