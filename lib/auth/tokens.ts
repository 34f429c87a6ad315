import jwt from 'jsonwebtoken';
import { durationSeconds } from '../config/index.ts';
import type { Runtime } from '../runtime.ts';

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
  const tenant = typeof subject.tenant === 'string' ? subject.tenant : requestTenant;
  if (tenant === undefined) throw new TypeError('signToken: no tenant (outside a request, name one on the account)');
  const payload = {
    uid: String(uid),
    tenant,
    username: typeof subject.username === 'string' ? subject.username : '',
    role: subject.role === 'admin' ? 'admin' : 'member',
  };
  // The configuration was validated at start-up; seconds as a number leave jsonwebtoken nothing to guess.
  const expiresIn = durationSeconds(runtime.config.auth.tokenTtl);
  return new Promise((resolve, reject) => {
    jwt.sign(payload, runtime.jwtKey, { algorithm: 'HS256', expiresIn }, (error, token) => {
      if (error || token === undefined) reject(error ?? new Error('signToken failed'));
      else resolve(token);
    });
  });
}

/** Verifies signature (HS256 only) and expiry; returns the claims or throws. */
export function verifySystemToken(runtime: Runtime, token: string): TokenClaims {
  const claims = jwt.verify(token, runtime.jwtKey, { algorithms: ALGORITHMS });
  if (typeof claims === 'string' || !hasSystemClaims(claims)) throw new jwt.JsonWebTokenError('token lacks the system claims');
  return claims;
}

/**
 * The claims every system JWT carries (SPEC §5.3). `exp` among them: a token without one, even
 * correctly signed, would never expire, and the service issues none like it.
 */
export function hasSystemClaims(claims: object): claims is TokenClaims {
  const { uid, tenant, exp } = claims as Partial<Record<keyof TokenClaims, unknown>>;
  return typeof uid === 'string' && typeof tenant === 'string' && typeof exp === 'number';
}

/** Token lifetime in seconds, for the `expiresIn` of a login answer. */
export function tokenLifetimeSeconds(token: string): number {
  const claims = jwt.decode(token) as TokenClaims;
  return claims.exp - claims.iat;
}
