import { createHash, timingSafeEqual } from 'node:crypto';

/** Compared as SHA-256 digests with `timingSafeEqual`: the time taken tells nothing of the token, its length included. */
export function bearerTokenMatches(authorization: string | undefined, token: string): boolean {
  const sent = /^Bearer +(\S+) *$/i.exec(authorization ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(sent), digest(token));
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
