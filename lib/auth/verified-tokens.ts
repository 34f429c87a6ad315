import type { TokenClaims } from './tokens.ts';

const CAPACITY = 10_000;

/**
 * Tokens that passed full verification (signature, algorithm), kept until they expire, so a
 * caller's repeated requests skip the HMAC and koa-jwt's promise machinery. Keyed by the exact
 * token text: any change to it misses and is verified in full. Expiry is checked on every use.
 * Only tokens with an `exp` are kept, and the oldest entry goes when the cache is full.
 */
export class VerifiedTokens {
  readonly #claimsByToken = new Map<string, TokenClaims>();

  /** The claims of a verified, unexpired token; 'expired' once its time is up. */
  lookup(token: string): TokenClaims | 'expired' | undefined {
    const claims = this.#claimsByToken.get(token);
    if (claims === undefined) return undefined;
    if (Math.floor(Date.now() / 1000) < claims.exp) return claims;
    this.#claimsByToken.delete(token);
    return 'expired';
  }

  remember(token: string, claims: TokenClaims): void {
    if (typeof claims.exp !== 'number') return;
    if (this.#claimsByToken.size >= CAPACITY) {
      const oldest = this.#claimsByToken.keys().next().value;
      if (oldest !== undefined) this.#claimsByToken.delete(oldest);
    }
    this.#claimsByToken.set(token, claims);
  }
}
