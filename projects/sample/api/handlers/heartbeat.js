/** @import { Request, Response } from 'spaceport' */

/**
 * `GET /heartbeat` (public): a plain-text `success`, for load balancers and monitors.
 * @param {Request} _req
 * @param {Response} res
 */
export function heartbeat(_req, res) {
  res.type('text/plain').send('success');
}
