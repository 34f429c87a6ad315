import { randomBytes } from 'node:crypto';
import test from 'ava';
import fc from 'fast-check';
import type { TokenClaims } from '../../lib/auth/tokens.ts';
import { VerifiedTokens } from '../../lib/auth/verified-tokens.ts';

const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

/** A token of the shape the service signs: its last part 43 characters of an HMAC-SHA256. */
function tokenWith(signature: Buffer, uid = 'uid-alice'): [string, TokenClaims] {
  const claims: TokenClaims = { uid, tenant: 'acme', username: 'alice', role: 'member', iat: 0, exp: inAnHour() };
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return [`eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.${payload}.${signature.toString('base64url')}`, claims];
}

const newToken = (uid?: string) => tokenWith(randomBytes(32), uid);

/** Tokens for the property's runs to verify first, made once. */
const EARLIER = Array.from({ length: 10_000 }, () => newToken('uid-earlier'));

test('a token is answered from memory from its second verification on, not its first', (t) => {
  const tokens = new VerifiedTokens();
  const [token, claims] = newToken();
  tokens.verifiedAnew(token, claims);
  t.is(tokens.lookup(token), undefined);
  tokens.verifiedAnew(token, claims);
  t.is(tokens.lookup(token), claims);
  t.is(tokens.lookup(`${token}x`), undefined);
});

/** Verified twice in a row: kept, unless the marks were cleared between the two (then a third keeps it). */
function keep(tokens: VerifiedTokens, token: string, claims: TokenClaims): void {
  tokens.verifiedAnew(token, claims);
  tokens.verifiedAnew(token, claims);
  if (tokens.lookup(token) === undefined) tokens.verifiedAnew(token, claims);
}

/** Enough other tokens kept to move everything kept before them to the old generation (5 000 a generation). */
function keepOthers(tokens: VerifiedTokens, count: number): void {
  for (let index = 0; index < count; index += 1) keep(tokens, ...newToken(`uid-other-${index}`));
}

test('a kept token whose time is up is expired', (t) => {
  const tokens = new VerifiedTokens();
  const [token, claims] = newToken();
  const expired = { ...claims, exp: Math.floor(Date.now() / 1000) - 1 };
  tokens.verifiedAnew(token, expired);
  tokens.verifiedAnew(token, expired);
  t.is(tokens.lookup(token), 'expired');
});

test('a token kept while valid is expired once its time is up, in either generation', async (t) => {
  const tokens = new VerifiedTokens();
  // Two whole seconds at least, for the work before the first lookup on a loaded machine.
  const exp = Math.floor(Date.now() / 1000) + 3;
  const [used, usedClaims] = tokenWith(randomBytes(32), 'uid-used');
  const [idle, idleClaims] = tokenWith(randomBytes(32), 'uid-idle');
  keep(tokens, used, { ...usedClaims, exp });
  keep(tokens, idle, { ...idleClaims, exp });
  keepOthers(tokens, 5_000);
  // `used` is looked up (and moves back to the young generation), `idle` stays in the old one.
  t.like(tokens.lookup(used), { uid: 'uid-used' });
  await new Promise((resolve) => setTimeout(resolve, exp * 1000 + 50 - Date.now()));
  t.is(tokens.lookup(used), 'expired');
  t.is(tokens.lookup(idle), 'expired');
});

test('an expired token met in the old generation leaves the valid tokens kept there', async (t) => {
  const tokens = new VerifiedTokens();
  // Two whole seconds at least, for the work before the wait on a loaded machine.
  const exp = Math.floor(Date.now() / 1000) + 3;
  const [expiring, expiringClaims] = newToken('uid-expiring');
  const [valid, validClaims] = newToken('uid-valid');
  keep(tokens, expiring, { ...expiringClaims, exp });
  keep(tokens, valid, validClaims);
  // 4 998 more fill the first generation, the next 5 000 the second: the first two are in the old one, the young one is full.
  keepOthers(tokens, 9_998);
  await new Promise((resolve) => setTimeout(resolve, exp * 1000 + 50 - Date.now()));
  t.is(tokens.lookup(expiring), 'expired');
  t.like(tokens.lookup(valid), { uid: 'uid-valid' });
});

test('a token verified again while the young generation is full does not push the old one out', (t) => {
  const tokens = new VerifiedTokens();
  const [first, firstClaims] = newToken('uid-first');
  keep(tokens, first, firstClaims);
  keepOthers(tokens, 4_999);
  // The young generation (first and 4 999 others) becomes the old one; 5 000 more fill the young one.
  const young = Array.from({ length: 5_000 }, (_, index) => newToken(`uid-young-${index}`));
  for (const [token, claims] of young) keep(tokens, token, claims);
  const [last, lastClaims] = young.at(-1) ?? newToken();
  // Kept already: verifying it once more (another request before it was looked up) changes nothing.
  tokens.verifiedAnew(last, lastClaims);
  t.like(tokens.lookup(first), { uid: 'uid-first' });
});

test('the cache is bounded: a token not used while two generations of others are kept is forgotten, one in use is not', (t) => {
  const tokens = new VerifiedTokens();
  const [forgotten, forgottenClaims] = newToken('uid-forgotten');
  const [used, usedClaims] = newToken('uid-used');
  keep(tokens, forgotten, forgottenClaims);
  keep(tokens, used, usedClaims);
  for (let round = 0; round < 4; round += 1) {
    keepOthers(tokens, 3_000);
    t.like(tokens.lookup(used), { uid: 'uid-used' });
  }
  t.is(tokens.lookup(forgotten), undefined);
});

test('a token that would never expire is not kept', (t) => {
  const tokens = new VerifiedTokens();
  const [token, claims] = newToken();
  keep(tokens, token, { ...claims, exp: Number.POSITIVE_INFINITY });
  t.is(tokens.lookup(token), undefined);
});

test('of 20 000 tokens each verified once, few are kept: only those sharing a mark with a token verified lately', (t) => {
  const tokens = new VerifiedTokens();
  let kept = 0;
  for (let count = 0; count < 20_000; count += 1) {
    const [token, claims] = newToken();
    tokens.verifiedAnew(token, claims);
    if (tokens.lookup(token) !== undefined) kept += 1;
  }
  // About one in twenty-six by the marks' fill; every one of them was kept before.
  t.true(kept < 20_000 * 0.06, `${kept} kept`);
});

test('a token verified again within the next 5 000 verifications is kept, whatever came before or between, and answers with its own claims', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { minLength: 1, maxLength: 300 }),
      fc.nat(),
      fc.nat({ max: 10_000 }),
      (signatures, pick, before) => {
        const tokens = new VerifiedTokens();
        // Verifications before the pair move where the marks are cleared (every 5 000) relative to it.
        for (const [earlier, itsClaims] of EARLIER.slice(0, before)) tokens.verifiedAnew(earlier, itsClaims);
        const between = signatures.map((signature, index) => tokenWith(Buffer.from(signature), `uid-${index}`));
        const [token, claims] = tokenWith(Buffer.from(signatures[pick % signatures.length] ?? []), 'uid-picked');
        tokens.verifiedAnew(token, claims);
        for (const [other, itsClaims] of between) if (other !== token) tokens.verifiedAnew(other, itsClaims);
        tokens.verifiedAnew(token, claims);
        // Twice within fewer than 5 000 verifications: at most one clearing of the marks fell between, so the second or a third is kept.
        if (tokens.lookup(token) === undefined) tokens.verifiedAnew(token, claims);
        return tokens.lookup(token) === claims;
      },
    ),
  );
  t.pass();
});
