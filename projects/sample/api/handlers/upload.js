import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import config from 'spaceport/config';
import settings from '../settings.js';
/** @import { Request, Response } from 'spaceport' */

/**
 * `POST /upload` (system auth): saves the multipart field `file` in the `uploadDir` setting under
 * its base name. The route's body schema declares `file` as one binary field, so two files under
 * it are refused (400) before this runs. The service already strips directories from client file names; taking the
 * base name again keeps this handler safe on its own.
 * @param {Request} req
 * @param {Response} res
 */
export async function upload(req, res) {
  const file = req.files?.file;
  if (!file) return res.status(400).json({ error: 'file is required (multipart field "file")' });
  // The schema lets one file through; this tells the type checker so.
  if (Array.isArray(file)) return res.status(400).json({ error: 'send one file in the field "file"' });
  const name = path.basename(file.name);
  if (name === '' || name === '.' || name === '..') return res.status(400).json({ error: 'the file name is not usable' });
  const folder = uploadFolder();
  await mkdir(folder, { recursive: true });
  await file.mv(path.join(folder, name));
  res.json({ success: true, data: { name, size: file.size } });
}

/** The `uploadDir` setting; a relative one is under the service's data folder. */
function uploadFolder() {
  return path.resolve(config.dataDir, settings.get('uploadDir'));
}
