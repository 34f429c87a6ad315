import { createHmac } from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import { verifySystemToken } from '../../lib/auth/tokens.ts';
import { startAuthApp, type AuthApp } from '../helpers/auth-app.ts';
import { serviceForFile, TEST_JWT_SECRET, type ServiceUnderTest } from '../helpers/service.ts';

/**
 * The rule every system JWT must pass beyond its signature (SPEC §5.3), in system authentication and in
 * `verifyToken` alike: no `crit` header (RFC 7515 §4.1.11: it names extensions the verifier must
 * understand, and it understands none), and an `exp` that is a safe integer in the future, no
 * further ahead than the token lifetime (12 h by default) plus 60 s of clock skew.
 */
const LIFETIME_SECONDS = 12 * 3600;
const SKEW_SECONDS = 60;

let service: ServiceUnderTest;
let app: AuthApp;
serviceForFile({ tenants: ['acme'] }, async (started) => {
  service = started;
  app = await startAuthApp(service.runtime);
});
test.after.always(() => app?.close());

const nowSeconds = () => Math.floor(Date.now() / 1000);
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Signed with the service's own secret, so only the rule can refuse it. */
function signed(header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const unsigned = `${base64url({ ...header, alg: 'HS256' })}.${base64url(claims)}`;
  return `${unsigned}.${createHmac('sha256', TEST_JWT_SECRET).update(unsigned).digest('base64url')}`;
}

function claimsWith(exp: unknown): Record<string, unknown> {
  return { uid: 'uid-alice', tenant: 'acme', username: 'alice', role: 'member', iat: nowSeconds(), exp };
}

function acceptedByVerifyToken(token: string): boolean {
  try {
    verifySystemToken(service.runtime, token);
    return true;
  } catch {
    return false;
  }
}

async function acceptedOverHttp(token: string): Promise<boolean> {
  const response = await fetch(`${app.url}/whoami`, { headers: { tenant: 'acme', authorization: `Bearer ${token}` } });
  await response.arrayBuffer();
  if (response.status === 401 && response.headers.get('www-authenticate') !== 'Bearer') throw new Error('a 401 without the Bearer challenge');
  return response.status === 200;
}

/** Header fields a forger might add, `crit` among them with any value. */
const extraHeader = fc.dictionary(
  fc.oneof(fc.constantFrom('crit', 'typ', 'kid', 'cty', 'b64', 'x5u', 'jku', 'zip'), fc.string({ maxLength: 8 })),
  fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.array(fc.string(), { maxLength: 3 }), fc.constant(['exp']), fc.constant([])),
  { maxKeys: 4 },
).filter((header) => !('alg' in header) && !('__proto__' in header));

/** `exp` of every kind: absurd, fractional, negative, past, just inside, just past the lifetime. */
const expiry = fc.oneof(
  fc.double(),
  fc.constantFrom(1e308, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, -1, 0, 1.5),
  fc.integer({ min: -3 * LIFETIME_SECONDS, max: 3 * LIFETIME_SECONDS }).map((offset) => nowSeconds() + offset),
  fc.double({ min: 1, max: LIFETIME_SECONDS, noNaN: true }).map((offset) => nowSeconds() + offset),
);

/** The rule, stated on its own; `undefined` for an `exp` within 5 s of a boundary, where the clock may tip it. */
function expectedAccepted(header: Record<string, unknown>, exp: number): boolean | undefined {
  const now = nowSeconds();
  const latest = now + LIFETIME_SECONDS + SKEW_SECONDS;
  if (Math.abs(exp - now) < 5 || Math.abs(exp - latest) < 5) return undefined;
  return !('crit' in header) && Number.isSafeInteger(exp) && exp > now && exp <= latest;
}

test('verifyToken accepts a token exactly when it has no crit header and a sane exp', (t) => {
  fc.assert(
    fc.property(extraHeader, expiry, (header, exp) => {
      const expected = expectedAccepted(header, exp);
      fc.pre(expected !== undefined);
      return acceptedByVerifyToken(signed(header, claimsWith(exp))) === expected;
    }),
    { numRuns: 2000 },
  );
  t.pass();
});

test('system authentication accepts a token exactly when it has no crit header and a sane exp', async (t) => {
  await fc.assert(
    fc.asyncProperty(extraHeader, expiry, async (header, exp) => {
      const expected = expectedAccepted(header, exp);
      fc.pre(expected !== undefined);
      return (await acceptedOverHttp(signed(header, claimsWith(exp)))) === expected;
    }),
    { numRuns: 300 },
  );
  t.pass();
});

const NAMED: Array<[string, Record<string, unknown>, unknown]> = [
  ['crit naming an extension', { crit: ['exp'] }, nowSeconds() + 600],
  ['an empty crit', { crit: [] }, nowSeconds() + 600],
  ['exp 1e308', {}, 1e308],
  ['a fractional exp', {}, nowSeconds() + 600.5],
  ['an exp past the token lifetime', {}, nowSeconds() + LIFETIME_SECONDS + 3600],
  ['an exp beyond the safe integers', {}, Number.MAX_SAFE_INTEGER + 2],
];

for (const [title, header, exp] of NAMED) {
  test(`a token with ${title} is refused: 401 invalid token, and verifyToken throws`, async (t) => {
    const token = signed(header, claimsWith(exp));
    t.false(acceptedByVerifyToken(token));
    const response = await fetch(`${app.url}/whoami`, { headers: { tenant: 'acme', authorization: `Bearer ${token}` } });
    t.is(response.status, 401);
    t.is(response.headers.get('www-authenticate'), 'Bearer');
    t.deepEqual(await response.json(), { error: 'invalid token' });
  });
}

test('a token the service issues passes the rule', async (t) => {
  const token = signed({ typ: 'JWT' }, claimsWith(nowSeconds() + LIFETIME_SECONDS));
  t.true(acceptedByVerifyToken(token));
  t.true(await acceptedOverHttp(token));
});
