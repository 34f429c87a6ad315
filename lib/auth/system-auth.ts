import jwt from 'jsonwebtoken';
import type { Context, Middleware } from 'koa';
import { unauthorized } from '../core/errors.ts';
import { requestState, type RequestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import { ofRequestTenant, systemTokenVerifier, type TokenClaims } from './tokens.ts';

const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * System authentication (SPEC §5.3): the `Authorization: Bearer` token must be a system token
 * of the request's tenant, verified by the one rule `verifyToken` uses too (HS256 pinned, a
 * prebuilt key, `systemClaimsOf`). Every failure is 401 with a Bearer challenge. A token verified
 * before is taken from the verified-token cache instead (its expiry checked on every use).
 *
 * Not koa-jwt: it makes the same jsonwebtoken call, behind a chain of promises (p-any, p-some,
 * p-cancelable) that cost each new token about 30 µs of CPU, three times the verification.
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
 * Tokens that passed full verification (signature, algorithm, the system-token rule), kept until
 * they expire, so a caller's repeated requests skip the HMAC. Keyed by the exact token text: any
 * change to it misses and is verified in full. Expiry is checked on every use.
 *
 * Two generations instead of one map evicting its oldest entry: deleting from the front of a
 * JavaScript Map leaves holes that every later look for "the oldest" walks past, and that cost
 * grew with the cache. When the young generation fills, it becomes the old one and the old one
 * is dropped whole; a token found in the old generation moves back into the young one.
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
