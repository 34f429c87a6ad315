import { serialize, type CookieSerializeOptions } from 'cookie';
import { sign } from 'cookie-signature';

export interface CookieOptions extends Omit<CookieSerializeOptions, 'maxAge'> {
  /** Milliseconds, as in Express; sent as `Max-Age` seconds plus `Expires`. */
  maxAge?: number;
  /** Sign the value with `req.secret`, which cookie-parser sets: `req.signedCookies` reads it back. */
  signed?: boolean;
}

/**
 * One `Set-Cookie` value as Express 5's `res.cookie` writes it, with Express's serializer; a
 * `maxAge` that is not a number goes to it as it is, which refuses it, as Express's does.
 */
export function setCookieValue(name: string, value: unknown, options: CookieOptions, secret: string | Buffer | undefined): string {
  const { signed, maxAge, ...rest } = options;
  if (signed && !secret) throw new Error('cookieParser("secret") required for signed cookies');
  const text = typeof value === 'object' ? `j:${JSON.stringify(value)}` : String(value);
  const serializeOptions: CookieSerializeOptions = { ...rest, path: rest.path ?? '/' };
  if (maxAge != null) {
    const milliseconds = Number(maxAge);
    if (Number.isNaN(milliseconds)) {
      serializeOptions.maxAge = maxAge;
    } else {
      serializeOptions.expires = new Date(Date.now() + milliseconds);
      serializeOptions.maxAge = Math.floor(milliseconds / 1000);
    }
  }
  return serialize(name, signed && secret ? `s:${sign(text, secret)}` : text, serializeOptions);
}
