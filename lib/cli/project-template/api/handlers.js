import { createHash, timingSafeEqual } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { config, db } from 'spaceport';
import settings from './settings.js';
/** @import { NextFunction, Request, Response, UploadedFile } from 'spaceport' */

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
 * `DELETE /notes/:id` (system JWT): admins only. `req.auth` holds the claims of the caller's
 * verified token (`uid`, `tenant`, `username`, `role`...), so a role check needs nothing more.
 * @param {Request} req
 * @param {Response} res
 */
export async function deleteNote(req, res) {
  if (req.auth?.role !== 'admin') return res.status(403).json({ error: 'only an admin may remove a note' });
  const { deletedCount } = await db.collection('notes').deleteOne({ _id: String(req.params.id) });
  if (deletedCount === 0) return res.status(404).json({ error: 'no such note' });
  res.json({ success: true, deleted: deletedCount });
}

/**
 * `POST /files` (system JWT): keeps the multipart field `file` in the tenant's folder under its
 * base name (the service already strips directories from client file names). The route's
 * schema has checked that one file came in that field.
 * @param {Request} req
 * @param {Response} res
 */
export async function uploadFile(req, res) {
  const file = /** @type {UploadedFile} */ (req.files?.file);
  const name = path.basename(file.name);
  // A dotfile could never come back: res.download refuses a name starting with a dot (Express's dotfiles: 'ignore').
  if (name === '' || name.startsWith('.')) return res.status(400).json({ error: 'the file name is not usable (empty, or starting with ".")' });
  const folder = filesFolder(req);
  await mkdir(folder, { recursive: true });
  await file.mv(path.join(folder, name));
  res.status(201).json({ success: true, data: { name, size: file.size } });
}

/**
 * `GET /files/:name` (system JWT): sends a kept file back as an attachment. The name is given
 * relative to `root`, as Express advises for a name from the client: a `..` in it is refused
 * (403), and the data folder may be a dot-folder (`./.data`), which Express refuses in a path
 * given whole (404).
 * @param {Request} req
 * @param {Response} res
 */
export function downloadFile(req, res) {
  res.download(String(req.params.name), { root: filesFolder(req) });
}

/**
 * This project's files of the request's tenant, in the service's data folder.
 * @param {Request} req
 */
function filesFolder(req) {
  return path.join(config.dataDir, '__project__', String(req.headers.tenant));
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
