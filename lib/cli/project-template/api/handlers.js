import { createHash, timingSafeEqual } from 'node:crypto';
import { db } from 'spaceport';
import settings from './settings.js';
/** @import { NextFunction, Request, Response } from 'spaceport' */

/**
 * `GET /ping` (public).
 * @param {Request} _req
 * @param {Response} res
 */
export function ping(_req, res) {
  res.json({ success: true, project: '__project__' });
}

/**
 * `POST /notes` (system JWT): the route's schema has checked the body before this runs.
 * `db` keeps the note in the request's tenant by itself.
 * @param {Request} req
 * @param {Response} res
 */
export async function createNote(req, res) {
  const { text } = /** @type {{ text: string }} */ (req.body);
  const note = { text, author: req.uid, createdAt: new Date().toISOString() };
  const { insertedId } = await db.collection('notes').insertOne(note);
  res.status(201).json({ success: true, data: { id: insertedId, text, createdAt: note.createdAt } });
}

/**
 * `GET /notes` (system JWT): the caller's own notes.
 * @param {Request} req
 * @param {Response} res
 */
export async function listNotes(req, res) {
  const notes = await db.collection('notes').find({ author: req.uid }).sort({ createdAt: 1 }).toArray();
  const data = notes.map((stored) => ({ id: stored._id, text: stored.text, createdAt: stored.createdAt }));
  res.json({ success: true, data, total: data.length });
}

/**
 * Custom authentication: the `x-api-key` header must equal the secret setting `apiKey`.
 * No key set means no partner gets in.
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
 * `GET /partner/status` (custom auth).
 * @param {Request} req
 * @param {Response} res
 */
export function partnerStatus(req, res) {
  res.json({ success: true, data: { tenant: req.headers.tenant, greeting: settings.get('greeting') } });
}

/**
 * Compares in constant time; hashing first gives both sides one length.
 * @param {string} given
 * @param {string} expected
 */
function sameSecret(given, expected) {
  const digest = (/** @type {string} */ text) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}
