import jwt from 'jsonwebtoken';
import type { Context, Middleware } from 'koa';
import { unauthorized } from '../core/errors.ts';
import { requestState, type RequestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import { ofRequestTenant, systemTokenVerifier, type TokenClaims } from './tokens.ts';
import { VerifiedTokens } from './verified-tokens.ts';

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * System authentication (SPEC §5.3): the Bearer token must be a system token of the request's
 * tenant, by the rule `verifyToken` uses too; every failure is 401 with a Bearer challenge.
 * Not koa-jwt: it makes the same jsonwebtoken call behind a chain of promises (p-any, p-some,
 * p-cancelable) costing each new token about 30 µs of CPU, three times the verification.
 */
export function systemAuthentication(runtime: Runtime): Middleware {
  const verify = systemTokenVerifier(runtime);
  const verified = new VerifiedTokens();

  const verifiedAnew = (token: string): TokenClaims => {
    const claims = verify(token);
    verified.verifiedAnew(token, claims);
    return claims;
  };

  const claimsOf = (token: string, state: RequestState): TokenClaims => {
    const known = verified.lookup(token);
    if (known === 'expired') throw unauthorized('token expired');
    try {
      return ofRequestTenant(known ?? verifiedAnew(token), state);
    } catch (error) {
      throw unauthorized(error instanceof jwt.TokenExpiredError ? 'token expired' : 'invalid token');
    }
  };

  // The caller is the token's account, if the token was issued for the request's tenant.
  return (ctx, next) => {
    const token = bearerToken(ctx);
    if (token === undefined) throw unauthorized('authentication required');
    const state = requestState(ctx);
    const claims = claimsOf(token, state);
    state.caller = { uid: claims.uid, claims: Object.freeze({ ...claims }) };
    return next();
  };
}

function bearerToken(ctx: Context): string | undefined {
  return BEARER.exec(ctx.get('Authorization'))?.[1];
}
