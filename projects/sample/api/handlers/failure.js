/** @import { Response } from 'spaceport' */

/**
 * A failure the handler expects and explains to its caller. The sample answers these itself
 * with the handler convention of SPEC §7 (500 `{success: false, message}`); anything else is
 * rethrown so the service answers it (500 without the error text, 503 when the database is
 * down) and logs it with its stack.
 */
export class ExpectedFailure extends Error {}

/**
 * Answers `error` when it is an `ExpectedFailure`, rethrows it otherwise.
 * @param {Response} res
 * @param {unknown} error
 */
export function answerFailure(res, error) {
  if (!(error instanceof ExpectedFailure)) throw error;
  res.status(500).json({ success: false, message: error.message });
}

/**
 * The parameter `name` of `source` (`req.body` or `req.query`), which must be a non-empty
 * string. Anything else (absent, an object such as `{"$ne": ""}`, a number, an array) fails,
 * so a caller can never slip a query operator in where a value belongs.
 * @param {unknown} source
 * @param {string} name
 * @returns {string}
 */
export function requiredString(source, name) {
  const value = source !== null && typeof source === 'object' && Object.hasOwn(source, name) ? Reflect.get(source, name) : undefined;
  if (typeof value !== 'string' || value === '') throw new ExpectedFailure(`${name} is required (a non-empty string)`);
  return value;
}
