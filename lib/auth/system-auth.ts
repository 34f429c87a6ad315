import createError from 'http-errors';
import type { Jwt } from 'jsonwebtoken';
import koaJwt from 'koa-jwt';
import type { Context, Middleware } from 'koa';
import { requestState } from '../http/state.ts';
import type { Runtime } from '../runtime.ts';
import { systemClaimsOf, tokenLifetimeLimit, type TokenClaims } from './tokens.ts';
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
  // `complete` (which koa-jwt passes on to jsonwebtoken) keeps the header, for the `crit` check.
  const options: koaJwt.Options & { complete: true } = {
    secret: runtime.jwtKey as unknown as string,
    algorithms: ['HS256'],
    key: CLAIMS_KEY,
    debug: true,
    complete: true,
  };
  const verifyJwt = koaJwt(options);
  const latestExpiry = tokenLifetimeLimit(runtime);
  const verified = new VerifiedTokens();

  async function claimsOf(ctx: Context, token: string): Promise<TokenClaims> {
    const known = verified.lookup(token);
    if (known === 'expired') throw rejected('token expired');
    if (known !== undefined) return known;
    let claims: TokenClaims;
    try {
      await verifyJwt(ctx, skipRest);
      claims = systemClaimsOf(ctx.state[CLAIMS_KEY] as Jwt, latestExpiry);
    } catch (error) {
      throw rejected(/expired/i.test((error as Error).message) ? 'token expired' : 'invalid token');
    } finally {
      ctx.state[CLAIMS_KEY] = undefined;
    }
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
