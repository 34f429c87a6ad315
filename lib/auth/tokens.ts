import jwt from 'jsonwebtoken';
import { durationSeconds } from '../config/index.ts';
import type { RequestState } from '../core/request-state.ts';
import type { Runtime } from '../core/runtime.ts';

/** The claims of a system JWT (SPEC §5.3). */
export interface TokenClaims {
  uid: string;
  tenant: string;
  username: string;
  role: string;
  iat: number;
  exp: number;
}

/** The account fields a token is made from; `uid`, `_id` or `id` names the account. */
export interface TokenSubject {
  uid?: unknown;
  _id?: unknown;
  id?: unknown;
  username?: unknown;
  role?: unknown;
  tenant?: unknown;
}

const ALGORITHMS: jwt.Algorithm[] = ['HS256'];

export function signSystemToken(runtime: Runtime, subject: TokenSubject, requestTenant: string | undefined): Promise<string> {
  const uid = subject.uid ?? subject._id ?? subject.id;
  if (typeof uid !== 'string' && typeof uid !== 'number') throw new TypeError('signToken: the account has no uid, _id or id');
  const tenant = tokenTenant(subject.tenant, requestTenant);
  const payload = {
    uid: String(uid),
    tenant,
    username: typeof subject.username === 'string' ? subject.username : '',
    role: subject.role === 'admin' ? 'admin' : 'member',
  };
  // Seconds as a number leave jsonwebtoken nothing to guess.
  const expiresIn = configuredLifetime(runtime);
  return new Promise((resolve, reject) => {
    jwt.sign(payload, runtime.jwtKey, { algorithm: 'HS256', expiresIn }, (error, token) => {
      if (error || token === undefined) reject(error ?? new Error('signToken failed'));
      else resolve(token);
    });
  });
}

/**
 * The request's tenant, or outside one (tools, tests) the account's. An account naming another
 * tenant is refused: accounts are free-form documents, and a field written into one must not
 * mint a token for another tenant (SPEC §4.2).
 */
function tokenTenant(named: unknown, requestTenant: string | undefined): string {
  const accountTenant = typeof named === 'string' ? named : undefined;
  if (requestTenant === undefined) {
    if (accountTenant === undefined) throw new TypeError('signToken: no tenant (outside a request, name one on the account)');
    return accountTenant;
  }
  if (accountTenant !== undefined && accountTenant !== requestTenant) {
    throw new TypeError(`signToken: the account names tenant "${accountTenant}", but the request is of tenant "${requestTenant}": a token is issued for the request's own tenant only`);
  }
  return requestTenant;
}

/** Signature (HS256 only), expiry, `systemClaimsOf`, then `ofRequestTenant`; returns the claims or throws. */
export function verifySystemToken(runtime: Runtime, token: string, request?: TenantOfRequest): TokenClaims {
  return ofRequestTenant(systemTokenVerifier(runtime)(token), request);
}

/** The part of a request's state the tenant rule reads. */
export type TenantOfRequest = Pick<RequestState, 'tenant'>;

/**
 * A system token counts only in the tenant it was issued for (SPEC §5.3): a request of any other
 * tenant, or of none, refuses it. Outside a request there is no tenant to compare with.
 */
export function ofRequestTenant(claims: TokenClaims, request: TenantOfRequest | undefined): TokenClaims {
  if (request !== undefined && claims.tenant !== request.tenant) throw new jwt.JsonWebTokenError('token was issued for another tenant');
  return claims;
}

/** `verifySystemToken` for one runtime, its lifetime limit worked out once: for every request. */
export function systemTokenVerifier(runtime: Runtime): (token: string) => TokenClaims {
  const latestSeconds = tokenLifetimeLimit(runtime);
  const options = { algorithms: ALGORITHMS, complete: true } as const;
  return (token) => systemClaimsOf(jwt.verify(token, runtime.jwtKey, options), latestSeconds);
}

/** A token's `exp` may lie this much further ahead than a fresh token's: instances' clocks differ a little. */
const CLOCK_SKEW_SECONDS = 60;

/** The latest `exp` accepted, as seconds from now: the configured token lifetime plus the skew. */
export function tokenLifetimeLimit(runtime: Runtime): number {
  return configuredLifetime(runtime) + CLOCK_SKEW_SECONDS;
}

/** `auth.tokenTtl` in seconds (the configuration was validated at start-up). */
function configuredLifetime(runtime: Runtime): number {
  const seconds = durationSeconds(runtime.config.auth.tokenTtl);
  if (seconds === undefined) throw new TypeError(`auth.tokenTtl: not a duration: ${runtime.config.auth.tokenTtl}`);
  return seconds;
}

/**
 * What a correctly signed JWT must also be to count as a system token (SPEC §5.3), for system
 * authentication and `verifyToken` alike:
 * - No `crit` header: it names extensions the verifier must understand (RFC 7515 §4.1.11).
 * - The system claims, `exp` among them: a token without one would never expire.
 * - `exp` a safe integer at most `latestSeconds` ahead: the service issues no longer-lived token.
 */
export function systemClaimsOf(verified: jwt.Jwt, latestSeconds: number): TokenClaims {
  if ('crit' in verified.header) throw new jwt.JsonWebTokenError('token names critical extensions');
  const claims = verified.payload;
  if (typeof claims === 'string' || !hasSystemClaims(claims)) throw new jwt.JsonWebTokenError('token lacks the system claims');
  if (!Number.isSafeInteger(claims.exp) || claims.exp - Date.now() / 1000 > latestSeconds) {
    throw new jwt.JsonWebTokenError('token exp is not a whole second within the token lifetime');
  }
  return claims;
}

/** The claims every system JWT carries (SPEC §5.3). */
function hasSystemClaims(claims: object): claims is TokenClaims {
  const { uid, tenant, exp } = claims as Partial<Record<keyof TokenClaims, unknown>>;
  return typeof uid === 'string' && typeof tenant === 'string' && typeof exp === 'number';
}

/** Token lifetime in seconds, for the `expiresIn` of a login answer. */
export function tokenLifetimeSeconds(token: string): number {
  const claims = jwt.decode(token) as TokenClaims;
  return claims.exp - claims.iat;
}
