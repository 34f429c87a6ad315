import createError from 'http-errors';
import koaJwt from 'koa-jwt';
import type { Context, Middleware } from 'koa';
import { requestState } from '../http/state.ts';
import type { Runtime } from '../runtime.ts';
import { hasSystemClaims, type TokenClaims } from './tokens.ts';
import { VerifiedTokens } from './verified-tokens.ts';

const CLAIMS_KEY = 'systemTokenClaims';
const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };
const BEARER = /^Bearer\s+(\S+)$/i;

/** koa-jwt only verifies here; the rest of the chain runs outside its try. */
const skipRest = async (): Promise<void> => {};

function rejected(message: string): Error {
  return createError(401, message, { headers: CHALLENGE });
}

/**
 * System authentication (SPEC §5.3): koa-jwt with HS256 pinned and a prebuilt key, then the
 * tenant claim checked against the request's tenant. Every failure is 401 with a Bearer challenge.
 * A token seen before is taken from the verified-token cache (expiry still checked each time).
 */
export function systemAuthentication(runtime: Runtime): Middleware {
  const verifyJwt = koaJwt({ secret: runtime.jwtKey as unknown as string, algorithms: ['HS256'], key: CLAIMS_KEY, debug: true });
  const verified = new VerifiedTokens();

  async function claimsOf(ctx: Context, token: string): Promise<TokenClaims> {
    const known = verified.lookup(token);
    if (known === 'expired') throw rejected('token expired');
    if (known !== undefined) return known;
    try {
      await verifyJwt(ctx, skipRest);
    } catch (error) {
      throw rejected(/expired/i.test((error as Error).message) ? 'token expired' : 'invalid token');
    }
    const claims = ctx.state[CLAIMS_KEY] as object;
    ctx.state[CLAIMS_KEY] = undefined;
    if (!hasSystemClaims(claims)) throw rejected('invalid token');
    verified.remember(token, claims);
    return claims;
  }

  return async (ctx, next) => {
    const token = BEARER.exec(ctx.get('Authorization'))?.[1];
    if (token === undefined) throw rejected('authentication required');
    const claims = await claimsOf(ctx, token);
    const state = requestState(ctx);
    if (claims.tenant !== state.tenant) throw rejected('invalid token');
    state.uid = claims.uid;
    state.claims = Object.freeze(claims);
    await next();
  };
}
