import type { TokenClaims } from './tokens.ts';

/** Tokens kept per generation: between one and two generations' worth are remembered. */
const GENERATION = 5_000;

/**
 * Fully verified tokens, by their exact text, so a caller's repeated requests skip the HMAC;
 * expiry is checked on every use. Two generations rather than one map evicting its oldest:
 * deleting from a Map's front leaves holes every later search for the oldest walks past, a cost
 * that grew with the cache. A full young generation becomes the old one, the old one dropped.
 *
 * A token is kept from its second verification on: kept at its first, every token sent once
 * stayed for thousands of requests, which the garbage collector copied and promoted (3.6 µs of
 * CPU a request of 37 where every request brings a new token, bench/README.md).
 */
export class VerifiedTokens {
  #young = new Map<string, TokenClaims>();
  #old = new Map<string, TokenClaims>();
  readonly #seenOnce = new SeenOnce(GENERATION);

  /** The claims of a kept, unexpired token; 'expired' once its time is up. */
  lookup(token: string): TokenClaims | 'expired' | undefined {
    const young = this.#young.get(token);
    const claims = young ?? this.#old.get(token);
    if (claims === undefined) return undefined;
    if (Math.floor(Date.now() / 1000) >= claims.exp) {
      this.#young.delete(token);
      this.#old.delete(token);
      return 'expired';
    }
    // Still in use: it moves to the young generation, so as not to go with the old one.
    if (young === undefined) this.#keep(token, claims);
    return claims;
  }

  /** A token the caller has just verified in full: kept if it was verified lately too. */
  verifiedAnew(token: string, claims: TokenClaims): void {
    if (this.#seenOnce.mark(token)) this.#keep(token, claims);
  }

  #keep(token: string, claims: TokenClaims): void {
    // A token that would never expire is not kept (system tokens' `exp` is checked the same way).
    if (!Number.isSafeInteger(claims.exp)) return;
    // A token kept already is only set again: turning the generations for it would drop the old one early.
    if (this.#young.size >= GENERATION && !this.#young.has(token)) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(token, claims);
  }
}

/**
 * The tokens verified lately, as one mark per fingerprint of the signature's end (an HMAC once
 * verified: evenly spread, and not for the caller to choose without the key). A token whose
 * mark another set only gets kept at its first verification, as every token was before; the
 * marks are cleared after `limit` of them, which keeps that to about one token in twenty-six.
 */
class SeenOnce {
  readonly #marks = new Uint8Array(2 ** 16);
  readonly #limit: number;
  #marked = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Whether the token's mark was set; sets it. */
  mark(token: string): boolean {
    const slot = fingerprint(token);
    if (this.#marks[slot] === 1) return true;
    if (this.#marked === this.#limit) {
      this.#marks.fill(0);
      this.#marked = 0;
    }
    this.#marks[slot] = 1;
    this.#marked += 1;
    return false;
  }
}

/** 16 bits of the four characters before the token's last (which holds fewer bits of the signature). */
function fingerprint(token: string): number {
  let hash = 0x811c9dc5;
  for (let index = token.length - 5; index < token.length - 1; index += 1) hash = Math.imul(hash ^ token.charCodeAt(index), 0x01000193);
  return (hash ^ (hash >>> 16)) & 0xffff;
}
