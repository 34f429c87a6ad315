import test from 'ava';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dropTestDatabase } from '../helpers/service.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

// Issue 37, point 5: the docs disagreed on what a route's `auth` sees. One statement, in every
// place that speaks of it, and the service doing what it says.
const STATEMENT =
  "A route's `auth` runs after the service has read a JSON, urlencoded or text body: `req.body` is parsed, and `req.rawBody` kept on a route with `rawBody: true`. Multipart files are read only once `auth` lets the request through, and the declared schemas are checked after it. Without an `auth`, no body is read before authentication.";
const DOCS = ['README.md', 'docs/writing-routes.md', 'docs/express-middleware.md'];
const REPOSITORY = path.resolve(import.meta.dirname, '../..');

const AUTH = `export function recordingAuth(req, res, next) {
  res.locals.atAuth = { body: req.body ?? null, rawBody: req.rawBody === undefined ? null : req.rawBody.toString(), files: req.files ?? null };
  next();
}
export function answerWhatAuthSaw(req, res) {
  res.json({ atAuth: res.locals.atAuth, filesAtHandler: Object.keys(req.files ?? {}) });
}`;
const ROUTES = `import { answerWhatAuthSaw, recordingAuth } from './handlers.js';
export default [
  { method: 'POST', path: '/hook', auth: recordingAuth, rawBody: true, function: answerWhatAuthSaw },
  { method: 'POST', path: '/upload', auth: recordingAuth, function: answerWhatAuthSaw },
];`;

test('the statement of what `auth` sees is the same in every document', (t) => {
  for (const document of DOCS) {
    const text = readFileSync(path.join(REPOSITORY, document), 'utf8').replace(/\s+/g, ' ');
    t.true(text.includes(STATEMENT), `${document} says: ${STATEMENT}`);
  }
});

test('`auth` sees the parsed body and its raw bytes, and no files yet', async (t) => {
  const service = await startWithProjects(t, writeTree({ 'hooks/api/routes.js': ROUTES, 'hooks/api/handlers.js': AUTH }));
  const hook = await service.fetch('/api/hooks/hook', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"order": 7}' });
  t.deepEqual(await json(hook), { atAuth: { body: { order: 7 }, rawBody: '{"order": 7}', files: null }, filesAtHandler: [] });

  const form = new FormData();
  form.append('file', new Blob(['a receipt']), 'receipt.txt');
  const upload = await json(await service.fetch('/api/hooks/upload', { method: 'POST', body: form }));
  t.like(upload, { atAuth: { files: null }, filesAtHandler: ['file'] });
});
