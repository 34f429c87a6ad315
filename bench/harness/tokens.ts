import jwt from 'jsonwebtoken';
import type { ServiceSetup } from './service.ts';

const CLAIMS = { uid: 'bench-account', tenant: 'default', username: 'bench', role: 'member' };

/** A system JWT for the `default` tenant, as `make token` would print one. */
export function systemToken(setup: ServiceSetup, tokenId?: string): string {
  return jwt.sign(CLAIMS, setup.jwtSecret, { algorithm: 'HS256', expiresIn: '1h', ...(tokenId === undefined ? {} : { jwtid: tokenId }) });
}

/** What a supply does once every token signed beforehand is out. */
export type WhenOut = 'sign' | 'reuse';

/**
 * Valid system JWTs that all differ (by their `jti`), signed before a measurement so that the
 * load generator spends nothing on signing, and handed out in turn. Once all are out, a supply
 * that must never send one twice (`sign`) signs each further token as it hands it out (a run
 * can outlast the count foreseen: a loaded machine runs a measurement longer than asked, and
 * faster than the run it was sized on), counted by `signedLate`; otherwise (`reuse`) the first
 * comes round again, counted by `reused`.
 */
export class TokenSupply {
  readonly #setup: ServiceSetup;
  readonly #tokens: string[];
  readonly #whenOut: WhenOut;
  readonly signedBeforehand: number;
  #handedOut = 0;

  constructor(setup: ServiceSetup, count: number, whenOut: WhenOut) {
    this.#setup = setup;
    this.#tokens = Array.from({ length: count }, (_, index) => systemToken(setup, `bench-${index}`));
    this.#whenOut = whenOut;
    this.signedBeforehand = count;
  }

  next(): string {
    if (this.#whenOut === 'sign' && this.#handedOut === this.#tokens.length) this.#tokens.push(systemToken(this.#setup, `bench-${this.#tokens.length}`));
    const token = this.#tokens[this.#handedOut % this.#tokens.length];
    this.#handedOut += 1;
    if (token === undefined) throw new Error('TokenSupply: no token');
    return token;
  }

  /** Tokens signed as they were handed out, the supply signed beforehand being out. */
  get signedLate(): number {
    return this.#tokens.length - this.signedBeforehand;
  }

  /** Tokens handed out a second time or more. */
  get reused(): number {
    return Math.max(0, this.#handedOut - this.#tokens.length);
  }
}
