import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { json, startWithProjects, tokenFor, writeTree } from '../helpers/projects.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * A file kept in a dot-folder (the default data folder is `./.data`): Express refuses the whole
 * path with a 404, and so does spaceport; given relative to `root`, it is sent. The 404 is
 * explained to the route's author in the log (issue 26: "downloads from the data folder fail
 * silently").
 */
const scratch = scratchFolder('dot-folders');
const folder = path.join(scratch, '.data', 'files');
mkdirSync(folder, { recursive: true });
writeFileSync(path.join(folder, 'kept.txt'), 'kept in a dot-folder');

const routes = `
import path from 'node:path';
const folder = ${JSON.stringify(folder)};
export default [
  { method: 'GET', path: '/whole/:name', function: (req, res) => res.download(path.join(folder, req.params.name)) },
  { method: 'GET', path: '/rooted/:name', function: (req, res) => res.download(req.params.name, { root: folder }) },
  { method: 'GET', path: '/allowed/:name', function: (req, res) => res.sendFile(path.join(folder, req.params.name), { dotfiles: 'allow' }) },
];
`;

let service: ServiceUnderTest;
let bearer: Record<string, string>;
test.before(async () => {
  service = await startWithProjects(undefined, writeTree({ 'files/api/routes.js': routes }));
  bearer = { authorization: `Bearer ${await tokenFor(service)}` };
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
  rmSync(scratch, { recursive: true, force: true });
});

test('a whole path through a dot-folder is 404, as in Express, and the log says why and what to write', async (t) => {
  const response = await service.fetch('/api/files/whole/kept.txt', { headers: { ...bearer, 'x-request-id': 'dot-folder-whole' } });
  t.is(response.status, 404);
  t.deepEqual(await json(response), { error: 'Not Found' });
  const warning = service.logs().find((entry) => entry.requestId === 'dot-folder-whole' && entry.level === 40);
  t.like(warning, { segment: '.data' });
  t.regex(String(warning?.msg), /segment starting with a dot \("\.data"\).*res\.download\(name, \{ root: folder \}\)/);
});

test('the same file given relative to root is sent, and nothing is logged', async (t) => {
  const response = await service.fetch('/api/files/rooted/kept.txt', { headers: { ...bearer, 'x-request-id': 'dot-folder-rooted' } });
  t.is(response.status, 200);
  t.is(response.headers.get('content-disposition'), 'attachment; filename=kept.txt');
  t.is(await response.text(), 'kept in a dot-folder');
  const missing = await service.fetch('/api/files/rooted/absent.txt', { headers: { ...bearer, 'x-request-id': 'dot-folder-absent' } });
  t.is(missing.status, 404);
  t.false(service.logs().some((entry) => String(entry.requestId).startsWith('dot-folder-') && entry.requestId !== 'dot-folder-whole' && entry.level === 40));
});

test("dotfiles: 'allow' sends the whole path, as in Express", async (t) => {
  const response = await service.fetch('/api/files/allowed/kept.txt', { headers: bearer });
  t.is(response.status, 200);
  t.is(await response.text(), 'kept in a dot-folder');
});
