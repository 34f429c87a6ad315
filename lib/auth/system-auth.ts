import createError from 'http-errors';
import koaJwt from 'koa-jwt';
import type { Middleware } from 'koa';
import { requestState } from '../http/state.ts';
import type { Runtime } from '../runtime.ts';
import type { TokenClaims } from './tokens.ts';

const CLAIMS_KEY = 'systemTokenClaims';
const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };

/** koa-jwt only verifies here; the rest of the chain runs outside its try. */
const skipRest = async (): Promise<void> => {};

function rejected(message: string): Error {
  return createError(401, message, { headers: CHALLENGE });
}

/**
 * System authentication (SPEC §5.3): koa-jwt with HS256 pinned and a prebuilt key, then the
 * tenant claim checked against the request's tenant. Every failure is 401 with a Bearer challenge.
 */
export function systemAuthentication(runtime: Runtime): Middleware {
  const verifyJwt = koaJwt({ secret: runtime.jwtKey as unknown as string, algorithms: ['HS256'], key: CLAIMS_KEY, debug: true });
  return async (ctx, next) => {
    if (!/^Bearer\s+\S/i.test(ctx.get('Authorization'))) throw rejected('authentication required');
    try {
      await verifyJwt(ctx, skipRest);
    } catch (error) {
      throw rejected(/expired/i.test((error as Error).message) ? 'token expired' : 'invalid token');
    }
    const claims = ctx.state[CLAIMS_KEY] as TokenClaims;
    delete ctx.state[CLAIMS_KEY];
    const state = requestState(ctx);
    if (typeof claims.uid !== 'string' || claims.tenant !== state.tenant) throw rejected('invalid token');
    state.uid = claims.uid;
    state.claims = Object.freeze(claims);
    await next();
  };
}
