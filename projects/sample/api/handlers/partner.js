import { createHash, timingSafeEqual } from 'node:crypto';
import settings from '../settings.js';
/** @import { NextFunction, Request, Response } from 'spaceport' */

/**
 * Custom authentication for partner calls: the `x-api-key` header must equal the secret
 * setting `apiKey` (`sample.apiKey` in the expert file, or `SAMPLE_API_KEY`). No key
 * configured means no partner gets in.
 * @param {Request} req
 * @param {Response} res
 * @param {NextFunction} next
 */
export function partnerKey(req, res, next) {
  const expected = settings.get('apiKey');
  const given = req.get('x-api-key');
  if (!expected || typeof given !== 'string' || !sameSecret(given, expected)) {
    return res.status(401).json({ error: 'a valid x-api-key header is required' });
  }
  next();
}

/**
 * `GET /partner/status` (custom auth): which tenant answered, and when.
 * @param {Request} req
 * @param {Response} res
 */
export function partnerStatus(req, res) {
  res.json({ success: true, data: { tenant: req.headers.tenant, time: new Date().toISOString() } });
}

/**
 * Compares in constant time. Hashing first gives both sides the same length, so neither the
 * comparison nor its early exit on a length mismatch tells a caller how long the key is.
 * @param {string} given
 * @param {string} expected
 */
function sameSecret(given, expected) {
  const digest = (/** @type {string} */ text) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
