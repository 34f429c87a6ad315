import jwt, { type Jwt } from 'jsonwebtoken';
import koaJwt from 'koa-jwt';
import type { Context, Middleware, Next } from 'koa';
import { unauthorized } from '../core/errors.ts';
import { requestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';
import { systemClaimsOf, tokenLifetimeLimit, type TokenClaims } from './tokens.ts';
import { VerifiedTokens } from './verified-tokens.ts';

/** Where koa-jwt leaves the verified token, and its error when it refused one. */
const VERIFIED = 'systemToken';
const REFUSED = 'jwtOriginalError';
const BEARER = /^Bearer\s+(\S+)$/i;

/**
 * System authentication (SPEC §5.3): koa-jwt, with HS256 pinned and a prebuilt key, verifies the
 * `Authorization: Bearer` token; then the token must be a system token (`systemClaimsOf`) of
 * the request's tenant. Every failure is 401 with a Bearer challenge. A token verified before
 * is taken from the verified-token cache instead (its expiry checked on every use).
 */
export function systemAuthentication(runtime: Runtime): Middleware {
  // `passthrough` leaves a refusal to the next step, which answers it; `complete` keeps the
  // header, for the `crit` check.
  const options: koaJwt.Options & { complete: true } = {
    secret: runtime.jwtKey as unknown as string,
    algorithms: ['HS256'],
    key: VERIFIED,
    passthrough: true,
    complete: true,
    getToken: (ctx) => bearerToken(ctx) ?? null,
  };
  const verifyJwt = koaJwt(options);
  const latestExpiry = tokenLifetimeLimit(runtime);
  const verified = new VerifiedTokens();

  /** The step after koa-jwt: what it verified must be a system token. */
  const admit = (ctx: Context, token: string, next: Next) => {
    const refusal = ctx.state[REFUSED] as unknown;
    const verifiedToken = ctx.state[VERIFIED] as Jwt;
    ctx.state[REFUSED] = ctx.state[VERIFIED] = undefined;
    if (refusal !== undefined) throw unauthorized(refusal instanceof jwt.TokenExpiredError ? 'token expired' : 'invalid token');
    let claims: TokenClaims;
    try {
      claims = systemClaimsOf(verifiedToken, latestExpiry);
    } catch {
      throw unauthorized('invalid token');
    }
    verified.remember(token, claims);
    return enter(ctx, claims, next);
  };

  return (ctx, next) => {
    const token = bearerToken(ctx);
    if (token === undefined) throw unauthorized('authentication required');
    const known = verified.lookup(token);
    if (known === 'expired') throw unauthorized('token expired');
    if (known !== undefined) return enter(ctx, known, next);
    return verifyJwt(ctx, () => admit(ctx, token, next));
  };
}

/** The caller is the token's account, if the token was issued for the request's tenant. */
function enter(ctx: Context, claims: TokenClaims, next: Next): Promise<void> {
  const state = requestState(ctx);
  if (claims.tenant !== state.tenant) throw unauthorized('invalid token');
  state.caller = { uid: claims.uid, claims: Object.freeze({ ...claims }) };
  return next();
}

function bearerToken(ctx: Context): string | undefined {
  return BEARER.exec(ctx.get('Authorization'))?.[1];
}
