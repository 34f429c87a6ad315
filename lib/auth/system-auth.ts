import jwt from 'jsonwebtoken';
import type { Context, Middleware } from 'koa';
import { unauthorized } from '../core/errors.ts';
import { requestState, type RequestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import { ofRequestTenant, systemTokenVerifier, type TokenClaims } from './tokens.ts';

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
    verified.remember(token, claims);
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

/** Tokens kept per generation: between one and two generations' worth are remembered. */
const GENERATION = 5_000;

/**
 * Fully verified tokens, by their exact text, so a caller's repeated requests skip the HMAC;
 * expiry is checked on every use. Two generations rather than one map evicting its oldest:
 * deleting from a Map's front leaves holes every later search for the oldest walks past, a cost
 * that grew with the cache. A full young generation becomes the old one, the old one dropped.
 */
class VerifiedTokens {
  #young = new Map<string, TokenClaims>();
  #old = new Map<string, TokenClaims>();

  /** The claims of a verified, unexpired token; 'expired' once its time is up. */
  lookup(token: string): TokenClaims | 'expired' | undefined {
    let claims = this.#young.get(token);
    if (claims === undefined) {
      claims = this.#old.get(token);
      if (claims === undefined) return undefined;
      this.remember(token, claims);
    }
    if (Math.floor(Date.now() / 1000) < claims.exp) return claims;
    this.#young.delete(token);
    return 'expired';
  }

  remember(token: string, claims: TokenClaims): void {
    if (typeof claims.exp !== 'number') return;
    if (this.#young.size >= GENERATION) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(token, claims);
  }
}
