import { db } from 'spaceport';
import { answerFailure, requiredString } from './failure.js';
/** @import { Request, Response } from 'spaceport' */

/**
 * `POST /getOneAccount` (public): the account whose username is `EMPLOYEE_ID`, if any.
 * The document store scopes the lookup to the request's tenant by itself.
 * @param {Request} req
 * @param {Response} res
 */
export async function getOneAccount(req, res) {
  try {
    const username = requiredString(req.body, 'EMPLOYEE_ID');
    const accounts = await db.collection('accounts').find({ username }).limit(1).toArray();
    const data = accounts.map(withoutPassword);
    res.json({ success: true, data, total: data.length });
  } catch (error) {
    answerFailure(res, error);
  }
}

/**
 * The account as a caller may see it: never the password hash.
 * @param {Record<string, unknown>} account
 */
export function withoutPassword({ password: _password, ...visible }) {
  return visible;
}
