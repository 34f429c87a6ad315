import jwt from 'jsonwebtoken';
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
  const expiresIn = runtime.config.auth.tokenTtl as jwt.SignOptions['expiresIn'];
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
  if (typeof claims === 'string' || typeof claims.uid !== 'string' || typeof claims.tenant !== 'string') {
    throw new jwt.JsonWebTokenError('token lacks the system claims');
  }
  return claims as TokenClaims;
}

/** Token lifetime in seconds, for the `expiresIn` of a login answer. */
export function tokenLifetimeSeconds(token: string): number {
  const claims = jwt.decode(token) as TokenClaims;
  return claims.exp - claims.iat;
}
