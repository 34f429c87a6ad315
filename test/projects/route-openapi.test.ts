import test from 'ava';
import { ProjectLoadError } from '../../lib/projects/index.ts';
import { dropTestDatabase } from '../helpers/service.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

const BAD_SECURITY = `
const answer = (req, res) => res.json({});
const key = (req, res, next) => next();
export default [
  { method: 'GET', path: '/a', auth: key, security: 'x-api-key', function: answer },
  { method: 'GET', path: '/b', auth: key, security: [], function: answer },
  { method: 'GET', path: '/c', auth: key, security: { type: 'apikey', in: 'header', name: 'x-api-key' }, function: answer },
  { method: 'GET', path: '/d', auth: key, security: { type: 'apiKey', in: 'heder', nme: 'x-api-key' }, function: answer },
  { method: 'GET', path: '/e', auth: key, security: [{ type: 'http', scheme: 'bearer' }, { type: 'http', scheme: '' }, 3], function: answer },
  { method: 'GET', path: '/f', security: { type: 'apiKey', in: 'header', name: 'x-api-key' }, function: answer },
  { method: 'GET', path: '/g', auth: key, securty: { type: 'apiKey', in: 'header', name: 'x-api-key' }, function: answer },
];
`;

test('a malformed security, or one on a route without a custom auth, is a start-up problem naming the route and the property', async (t) => {
  const root = writeTree({ 'bad/api/routes.js': BAD_SECURITY });
  const error = await t.throwsAsync(startWithProjects(t, root), { instanceOf: ProjectLoadError });
  const lines = (error as ProjectLoadError).message.split('\n').slice(1).map((line) => line.replace(/^.*routes\.js /, ''));
  t.deepEqual(lines, [
    '#0 GET /a: security must be a security scheme object or a non-empty array of them (got string)',
    '#1 GET /b: security must be a security scheme object or a non-empty array of them (got an empty array)',
    '#2 GET /c: security.type must be one of "apiKey", "http", "mutualTLS", "oauth2", "openIdConnect" (got "apikey")',
    '#3 GET /d: security.name is missing (a security scheme of type "apiKey" needs name and in)',
    '#3 GET /d: security.in must be "query", "header" or "cookie" (got "heder")',
    '#3 GET /d: unknown property "security.nme" (did you mean "name"?)',
    '#4 GET /e: security[1].scheme must be a non-empty string (got "")',
    '#4 GET /e: security[2] must be a security scheme object (got number)',
    '#5 GET /f: security describes what a custom `auth` function reads, and this route has none (a route with system authentication is documented with the system JWT; a public route reads no credential)',
    '#6 GET /g: unknown property "securty" (did you mean "security"?)',
  ]);
});

const GOOD_SECURITY = `
const answer = (req, res) => res.json({});
const key = (req, res, next) => next();
export default [
  { method: 'GET', path: '/hook', auth: key, security: { type: 'apiKey', in: 'query', name: 'token', 'x-note': 'kept' }, function: answer },
  { method: 'GET', path: '/sso', auth: key, security: { type: 'openIdConnect', openIdConnectUrl: 'https://id.example.com/.well-known/openid-configuration' }, function: answer },
];
`;

test('a valid security loads, extensions included, and the document lists it', async (t) => {
  const service = await startWithProjects(t, writeTree({ 'good/api/routes.js': GOOD_SECURITY }));
  const document = await json(await service.fetch('/openapi.json'));
  const schemes = (document.components as Record<string, Record<string, unknown>>).securitySchemes;
  t.deepEqual(schemes['token.query'], { type: 'apiKey', in: 'query', name: 'token', 'x-note': 'kept' });
  t.like(schemes.openIdConnect, { type: 'openIdConnect' });
});

const BAD_OPERATION_IDS = `
const answer = (req, res) => res.json({});
export default [
  { method: 'GET', path: '/a', operationId: 'list-things', function: answer },
  { method: 'GET', path: '/b', operationId: 'listThings', function: answer },
  { method: 'POST', path: '/c', operationId: 'listThings', function: answer },
  { method: 'GET', path: '/d', operationID: 'showThing', function: answer },
];
`;

test('an operationId that is no identifier, or that another route of the file has, is a start-up problem', async (t) => {
  const root = writeTree({ 'bad/api/routes.js': BAD_OPERATION_IDS });
  const error = await t.throwsAsync(startWithProjects(t, root), { instanceOf: ProjectLoadError });
  t.deepEqual(
    (error as ProjectLoadError).problems.map((problem) => `#${problem.route?.index}: ${problem.reason}`),
    [
      '#0: operationId must be an identifier: letters, digits, _ and $, not starting with a digit (got "list-things")',
      '#2: same operationId as route #1',
      '#3: unknown property "operationID" (did you mean "operationId"?)',
    ],
  );
});

const QUERY_KEY = `
const answer = (req, res) => res.json({ success: true });
const partner = (req, res, next) => (req.query.partner === 'p4rtner-s3cret' ? next() : res.status(401).json({ error: 'partner key required' }));
export default [
  { method: 'GET', path: '/feed', auth: partner, security: { type: 'apiKey', in: 'query', name: 'partner' }, function: answer },
  { method: 'GET', path: '/open', skipAuth: true, function: answer },
];
`;

test('a query parameter a route declares its credential in never reaches the log line, whatever its name', async (t) => {
  const root = writeTree({ 'feeds/api/routes.js': QUERY_KEY });
  const service = await startWithProjects(t, root);
  const answered = await service.fetch('/api/feeds/feed?partner=p4rtner-s3cret&page=2', { headers: { tenant: 'default', 'x-request-id': 'query-key' } });
  t.is(answered.status, 200);
  const refused = await service.fetch('/api/feeds/feed?partner=wr0ng-s3cret', { headers: { tenant: 'default', 'x-request-id': 'query-key-refused' } });
  t.is(refused.status, 401);
  // Another route declares no such credential: its `partner` is an ordinary parameter.
  await service.fetch('/api/feeds/open?partner=visible', { headers: { tenant: 'default', 'x-request-id': 'query-open' } });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const urlOf = (id: string) => service.logs().find((entry) => entry.requestId === id && entry.msg === 'request')?.url;
  t.is(urlOf('query-key'), '/api/feeds/feed?partner=[redacted]&page=2');
  t.is(urlOf('query-key-refused'), '/api/feeds/feed?partner=[redacted]');
  t.is(urlOf('query-open'), '/api/feeds/open?partner=visible');
  t.false(service.logText().includes('s3cret'));
});
