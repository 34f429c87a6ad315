import type { TokenClaims } from './tokens.ts';

/** Tokens kept per generation: between one and two generations' worth are remembered. */
const GENERATION = 5_000;

/**
 * Tokens that passed full verification (signature, algorithm, the system-token rule), kept until
 * they expire, so a caller's repeated requests skip the HMAC. Keyed by the exact token text: any
 * change to it misses and is verified in full. Expiry is checked on every use.
 *
 * Two generations instead of one map evicting its oldest entry: deleting from the front of a
 * JavaScript Map leaves holes that every later look for "the oldest" walks past, and that cost
 * grew with the cache. When the young generation fills, it becomes the old one and the old one
 * is dropped whole; a token found in the old generation moves back into the young one.
 */
export class VerifiedTokens {
  #young = new Map<string, TokenClaims>();
  #old = new Map<string, TokenClaims>();

  /** The claims of a verified, unexpired token; 'expired' once its time is up. */
  lookup(token: string): TokenClaims | 'expired' | undefined {
    let claims = this.#young.get(token);
    if (claims === undefined) {
      claims = this.#old.get(token);
      if (claims === undefined) return undefined;
      this.remember(token, claims);
    }
    if (Math.floor(Date.now() / 1000) < claims.exp) return claims;
    this.#young.delete(token);
    return 'expired';
  }

  remember(token: string, claims: TokenClaims): void {
    if (typeof claims.exp !== 'number') return;
    if (this.#young.size >= GENERATION) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(token, claims);
  }
}
