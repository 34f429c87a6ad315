import jwt from 'jsonwebtoken';
import type { ServiceSetup } from './service.ts';

const CLAIMS = { uid: 'bench-account', tenant: 'default', username: 'bench', role: 'member' };

/** A system JWT for the `default` tenant, as `make token` would print one. */
export function systemToken(setup: ServiceSetup, tokenId?: string): string {
  return jwt.sign(CLAIMS, setup.jwtSecret, { algorithm: 'HS256', expiresIn: '1h', ...(tokenId === undefined ? {} : { jwtid: tokenId }) });
}

/**
 * Valid system JWTs that all differ (by their `jti`), signed before a measurement so that the
 * load generator spends nothing on signing. Handed out in turn; once all are out, the first
 * comes round again and `reused` counts how often that happened.
 */
export class TokenSupply {
  readonly #tokens: readonly string[];
  #handedOut = 0;

  constructor(setup: ServiceSetup, count: number) {
    this.#tokens = Array.from({ length: count }, (_, index) => systemToken(setup, `bench-${index}`));
  }

  next(): string {
    const token = this.#tokens[this.#handedOut % this.#tokens.length];
    this.#handedOut += 1;
    if (token === undefined) throw new Error('TokenSupply: no token');
    return token;
  }

  get size(): number {
    return this.#tokens.length;
  }

  /** Tokens handed out a second time or more. */
  get reused(): number {
    return Math.max(0, this.#handedOut - this.#tokens.length);
  }
}
