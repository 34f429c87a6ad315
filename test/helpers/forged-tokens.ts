import { createHmac, generateKeyPairSync, sign } from 'node:crypto';

/** The claims of a system JWT for `uid` in `tenant`, valid for an hour from now. */
export function systemClaims(uid: string, tenant: string): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return { uid, tenant, username: uid, role: 'admin', iat: now, exp: now + 3600 };
}

function base64url(value: unknown): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
}

type HmacAlgorithm = 'HS256' | 'HS384' | 'HS512';

/** A compact JWT with any header, signed by HMAC with `secret` (whatever the header claims). */
export function hmacToken(header: Record<string, unknown>, claims: unknown, secret: string, algorithm: HmacAlgorithm = 'HS256'): string {
  const signingInput = `${base64url(header)}.${base64url(claims)}`;
  const digest = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' }[algorithm];
  return `${signingInput}.${createHmac(digest, secret).update(signingInput).digest('base64url')}`;
}

/**
 * Tokens the service must refuse with 401 (SPEC §5.3, RFC 7515 §4.1.11 for `crit`), by what is
 * wrong with them. `secret` is the service's real JWT secret, so that each token is wrong in
 * one way only; `uid` names a real account of `tenant`, and `otherTenant` exists too.
 */
export function forgedTokens(secret: string, uid: string, tenant: string, otherTenant: string): Record<string, string> {
  const claims = systemClaims(uid, tenant);
  const now = Math.floor(Date.now() / 1000);
  const hs256 = { alg: 'HS256', typ: 'JWT' };
  const valid = hmacToken(hs256, claims, secret);
  const [validHeader, validPayload, validSignature = ''] = valid.split('.');
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const rsInput = `${base64url({ alg: 'RS256', typ: 'JWT' })}.${base64url(claims)}`;
  return {
    'alg none, no signature': `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`,
    'alg NONE, the real signature kept': `${base64url({ alg: 'NONE', typ: 'JWT' })}.${validPayload}.${validSignature}`,
    'HS384 with the real secret': hmacToken({ alg: 'HS384', typ: 'JWT' }, claims, secret, 'HS384'),
    'HS512 with the real secret': hmacToken({ alg: 'HS512', typ: 'JWT' }, claims, secret, 'HS512'),
    "RS256 with a stranger's key": `${rsInput}.${sign('sha256', Buffer.from(rsInput), stranger).toString('base64url')}`,
    'HS256 header, HS512 signature': hmacToken(hs256, claims, secret, 'HS512'),
    'payload changed after signing': `${validHeader}.${base64url({ ...claims, role: 'admin', uid: 'someone-else' })}.${validSignature}`,
    'signed with another secret': hmacToken(hs256, claims, `${secret}-not`),
    'signature cut short': valid.slice(0, -4),
    'empty signature': `${validHeader}.${validPayload}.`,
    expired: hmacToken(hs256, { ...claims, iat: now - 7200, exp: now - 60 }, secret),
    'exp 1e308 (never expires)': hmacToken(hs256, { ...claims, exp: 1e308 }, secret),
    'exp as a string': hmacToken(hs256, { ...claims, exp: String(now + 3600) }, secret),
    'nbf in the future': hmacToken(hs256, { ...claims, nbf: now + 3600 }, secret),
    'no exp': hmacToken(hs256, { uid, tenant, iat: now }, secret),
    'no uid': hmacToken(hs256, { tenant, iat: now, exp: now + 3600 }, secret),
    'crit names an unknown extension': hmacToken({ ...hs256, crit: ['x-spaceport-unknown'], 'x-spaceport-unknown': true }, claims, secret),
    'crit is not a list': hmacToken({ ...hs256, crit: 'exp' }, claims, secret),
    'another tenant': hmacToken(hs256, { ...claims, tenant: otherTenant }, secret),
    'tenant as a number': hmacToken(hs256, { ...claims, tenant: 7 }, secret),
    'header not JSON': `${base64url('{"alg":"HS256"')}.${validPayload}.${validSignature}`,
    'payload not JSON': hmacToken(hs256, 'not json', secret),
    'payload a JSON array': hmacToken(hs256, [claims], secret),
    'two parts': `${validHeader}.${validPayload}`,
    'four parts': `${valid}.${validSignature}`,
    garbage: 'not-a-token',
    'dots only': '..',
    'a long run of letters': 'a'.repeat(6000),
  };
}
