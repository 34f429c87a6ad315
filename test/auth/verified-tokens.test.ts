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

test('a token is answered from memory from its second verification on, not its first', (t) => {
  const tokens = new VerifiedTokens();
  const [token, claims] = newToken();
  tokens.verifiedAnew(token, claims);
  t.is(tokens.lookup(token), undefined);
  tokens.verifiedAnew(token, claims);
  t.is(tokens.lookup(token), claims);
  t.is(tokens.lookup(`${token}x`), undefined);
});

test('a kept token whose time is up is expired', (t) => {
  const tokens = new VerifiedTokens();
  const [token, claims] = newToken();
  const expired = { ...claims, exp: Math.floor(Date.now() / 1000) - 1 };
  tokens.verifiedAnew(token, expired);
  tokens.verifiedAnew(token, expired);
  t.is(tokens.lookup(token), 'expired');
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

test('a token verified again within the next 5 000 verifications is kept, whatever came between, and answers with its own claims', (t) => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ minLength: 32, maxLength: 32 }), { minLength: 1, maxLength: 300 }),
      fc.nat(),
      fc.nat({ max: 4_000 }),
      (signatures, pick, before) => {
        const tokens = new VerifiedTokens();
        // Verifications before the pair move where the marks are cleared relative to it.
        for (let count = 0; count < before; count += 1) tokens.verifiedAnew(...newToken('uid-earlier'));
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
