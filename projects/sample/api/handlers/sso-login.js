import { config, db, signToken } from 'spaceport';
import { ExpectedFailure, answerFailure, requiredString } from './failure.js';
/** @import { Request, Response } from 'spaceport' */

const DASHBOARD = '/dashboard?headerRender=0';

/**
 * `GET /home?usertoken=...` (public): single sign-on. The SSO server vouches for the user
 * token and names the employee; the local account of that name gets a system JWT and the
 * browser goes on to the login page with it.
 * @param {Request} req
 * @param {Response} res
 */
export async function home(req, res) {
  try {
    const userToken = requiredString(req.query, 'usertoken');
    const employeeId = await verifyWithSso(userToken);
    const account = await db.collection('accounts').findOne({ username: employeeId });
    if (!account) throw new ExpectedFailure('user does not exist');
    const token = await signToken(account);
    res.redirect(`/user/login?token=${encodeURIComponent(token)}&redirect=${encodeURIComponent(DASHBOARD)}`);
  } catch (error) {
    answerFailure(res, error);
  }
}

/**
 * Asks `<sso.authUrl>/verify` who `userToken` belongs to, within `sso.timeoutMs` (the time
 * limit covers the reply's body too). Every way the SSO server can let us down is an
 * `ExpectedFailure` naming it.
 * @param {string} userToken
 * @returns {Promise<string>} the employee id
 */
async function verifyWithSso(userToken) {
  const { authUrl, timeoutMs } = config.sso;
  if (!authUrl) throw new ExpectedFailure('single sign-on is not configured (sso.authUrl)');
  try {
    const reply = await fetch(`${authUrl.replace(/\/+$/, '')}/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ token: userToken }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!reply.ok) throw new ExpectedFailure(`single sign-on refused the token (status ${reply.status})`);
    return employeeIdOf(await reply.json());
  } catch (error) {
    throw ssoFailure(error, timeoutMs);
  }
}

/**
 * @param {unknown} reply
 * @returns {string}
 */
function employeeIdOf(reply) {
  const employeeId = /** @type {{employeeId?: unknown} | null} */ (reply)?.employeeId;
  if (typeof employeeId !== 'string' || employeeId === '') throw new ExpectedFailure('single sign-on reply has no employeeId');
  return employeeId;
}

/**
 * @param {unknown} error
 * @param {number} timeoutMs
 */
function ssoFailure(error, timeoutMs) {
  if (error instanceof ExpectedFailure) return error;
  if (error instanceof DOMException && error.name === 'TimeoutError') {
    return new ExpectedFailure(`single sign-on did not answer within ${timeoutMs} ms`);
  }
  if (error instanceof SyntaxError) return new ExpectedFailure('single sign-on sent a reply that is not JSON');
  return new ExpectedFailure('single sign-on is unreachable');
}
