import { createHmac, generateKeyPairSync } from 'node:crypto';
import test from 'ava';
import jwt from 'jsonwebtoken';
import { signSystemToken, verifySystemToken } from '../../lib/auth/tokens.ts';
import { startAuthApp, type AuthApp } from '../helpers/auth-app.ts';
import { serviceForFile, TEST_JWT_SECRET, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
let app: AuthApp;
const ALICE = { uid: 'uid-alice', username: 'alice', role: 'admin' };
const CLAIMS = { ...ALICE, tenant: 'acme' };

serviceForFile({ tenants: ['acme', 'globex'] }, async (started) => {
  service = started;
  app = await startAuthApp(service.runtime);
});
test.after.always(() => app?.close());

function call(authorization: string | undefined, tenant = 'acme', path = '/whoami'): Promise<Response> {
  const headers: Record<string, string> = { tenant };
  if (authorization !== undefined) headers.authorization = authorization;
  return fetch(`${app.url}${path}`, { headers });
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const nowSeconds = () => Math.floor(Date.now() / 1000);

test.serial('a valid token reaches the handler with its uid and claims', async (t) => {
  const token = await signSystemToken(service.runtime, ALICE, 'acme');
  const before = app.handled();
  const response = await call(`Bearer ${token}`);
  t.is(response.status, 200);
  const body = (await response.json()) as { uid: string; claims: Record<string, unknown> };
  t.is(body.uid, 'uid-alice');
  t.like(body.claims, CLAIMS);
  t.is(app.handled(), before + 1);
});

test.serial('the scheme name is case-insensitive', async (t) => {
  const token = await signSystemToken(service.runtime, ALICE, 'acme');
  t.is((await call(`bearer ${token}`)).status, 200);
});

const REJECTED: Array<[string, () => string | undefined, string]> = [
  ['no Authorization header', () => undefined, 'authentication required'],
  ['another scheme', () => `Basic ${Buffer.from('alice:pw').toString('base64')}`, 'authentication required'],
  ['Bearer without a token', () => 'Bearer ', 'authentication required'],
  ['a malformed token', () => 'Bearer not.a.jwt', 'invalid token'],
  ['garbage', () => 'Bearer %%%', 'invalid token'],
  ['an expired token', () => `Bearer ${jwt.sign({ ...CLAIMS, exp: nowSeconds() - 10 }, TEST_JWT_SECRET, { algorithm: 'HS256' })}`, 'token expired'],
  ['a token signed with another secret', () => `Bearer ${jwt.sign(CLAIMS, 'some-other-secret-of-decent-length', { algorithm: 'HS256' })}`, 'invalid token'],
  ['alg none', () => `Bearer ${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ ...CLAIMS, iat: nowSeconds() })}.`, 'invalid token'],
  ['HS512 with the right secret', () => `Bearer ${jwt.sign(CLAIMS, TEST_JWT_SECRET, { algorithm: 'HS512' })}`, 'invalid token'],
  ['RS256 signed with a private key', () => `Bearer ${jwt.sign(CLAIMS, privateKey, { algorithm: 'RS256' })}`, 'invalid token'],
  ['HS256 keyed with an RSA public key (algorithm confusion)', () => `Bearer ${hs256WithKey(publicPem)}`, 'invalid token'],
  ['a token for another tenant', () => `Bearer ${jwt.sign({ ...CLAIMS, tenant: 'globex' }, TEST_JWT_SECRET, { algorithm: 'HS256' })}`, 'invalid token'],
  ['a token that never expires (no exp)', () => `Bearer ${jwt.sign(CLAIMS, TEST_JWT_SECRET, { algorithm: 'HS256' })}`, 'invalid token'],
  ['a token without a uid', () => `Bearer ${jwt.sign({ tenant: 'acme', username: 'x', role: 'member' }, TEST_JWT_SECRET, { algorithm: 'HS256' })}`, 'invalid token'],
  ['a token with a changed payload', () => `Bearer ${tampered()}`, 'invalid token'],
];

/** jsonwebtoken refuses PEM text as an HMAC key, so sign the confused token by hand. */
function hs256WithKey(key: string): string {
  const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ ...CLAIMS, iat: nowSeconds() })}`;
  return `${unsigned}.${createHmac('sha256', key).update(unsigned).digest('base64url')}`;
}

function tampered(): string {
  const [header, , signature] = jwt.sign(CLAIMS, TEST_JWT_SECRET, { algorithm: 'HS256' }).split('.');
  return `${header}.${base64url({ ...CLAIMS, role: 'admin', uid: 'uid-root', iat: nowSeconds() })}.${signature}`;
}

for (const [title, authorization, error] of REJECTED) {
  test.serial(`401 with a Bearer challenge for ${title}`, async (t) => {
    const before = app.handled();
    const response = await call(authorization());
    t.is(response.status, 401);
    t.is(response.headers.get('www-authenticate'), 'Bearer');
    t.deepEqual(await response.json(), { error });
    t.is(app.handled(), before, 'the handler must not run');
  });
}

test.serial('a token accepted once is still refused once it expires', async (t) => {
  const exp = nowSeconds() + 2;
  const token = jwt.sign({ ...CLAIMS, exp }, TEST_JWT_SECRET, { algorithm: 'HS256' });
  t.is((await call(`Bearer ${token}`)).status, 200);
  t.is((await call(`Bearer ${token}`)).status, 200);
  await new Promise((resolve) => setTimeout(resolve, exp * 1000 + 100 - Date.now()));
  const response = await call(`Bearer ${token}`);
  t.is(response.status, 401);
  t.deepEqual(await response.json(), { error: 'token expired' });
});

test.serial('a token accepted and kept does not vouch for an altered copy or another tenant', async (t) => {
  const token = await signSystemToken(service.runtime, { ...ALICE, uid: 'uid-cached' }, 'acme');
  // Kept by the verified-token cache from its second verification on: the calls below meet it there.
  t.is((await call(`Bearer ${token}`)).status, 200);
  t.is((await call(`Bearer ${token}`)).status, 200);
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const altered = `${header}.${base64url({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), uid: 'uid-root' })}.${signature}`;
  t.is((await call(`Bearer ${altered}`)).status, 401);
  t.is((await call(`Bearer ${token}x`)).status, 401);
  t.is((await call(`Bearer ${token}`, 'globex')).status, 401);
  t.is((await call(`Bearer ${token}`)).status, 200);
});

test.serial('a good token used under another tenant header is 401', async (t) => {
  const token = await signSystemToken(service.runtime, ALICE, 'acme');
  const response = await call(`Bearer ${token}`, 'globex');
  t.is(response.status, 401);
  t.is(response.headers.get('www-authenticate'), 'Bearer');
});

test.serial('the tenant is checked before the token: an unknown tenant is 400', async (t) => {
  t.is((await call(undefined, 'nowhere')).status, 400);
});

test.serial('a failure after authentication stays a 500, not a 401', async (t) => {
  const token = await signSystemToken(service.runtime, ALICE, 'acme');
  const response = await call(`Bearer ${token}`, 'acme', '/fail');
  t.is(response.status, 500);
  t.deepEqual(await response.json(), { success: false, message: 'Internal Server Error' });
});

test.serial('signToken uses uid, _id or id, the request\'s tenant (the named one outside a request), and member as the default role', async (t) => {
  const fromId = verifySystemToken(service.runtime, await signSystemToken(service.runtime, { _id: 'by-id', username: 'bob' }, 'acme'));
  t.like(fromId, { uid: 'by-id', username: 'bob', role: 'member', tenant: 'acme' });
  const named = verifySystemToken(service.runtime, await signSystemToken(service.runtime, { id: 7, tenant: 'globex' }, undefined));
  t.like(named, { uid: '7', tenant: 'globex' });
  await t.throwsAsync(async () => signSystemToken(service.runtime, { id: 7, tenant: 'globex' }, 'acme'), { instanceOf: TypeError, message: /another|names tenant/ });
  await t.throwsAsync(async () => signSystemToken(service.runtime, { username: 'nobody' }, 'acme'), { instanceOf: TypeError });
  await t.throwsAsync(async () => signSystemToken(service.runtime, { uid: 'x' }, undefined), { instanceOf: TypeError });
});

test.serial('verifyToken in a request of tenant acme throws for every token system authentication refuses there', (t) => {
  for (const [title, authorization] of REJECTED.slice(3)) {
    const token = (authorization() ?? '').replace(/^Bearer /, '');
    t.throws(() => verifySystemToken(service.runtime, token, { tenant: 'acme' }), { any: true }, title);
  }
});

test.serial('the JWT secret never reaches a log line', (t) => {
  t.false(service.logText().includes(TEST_JWT_SECRET));
});
