import test from 'ava';
import path from 'node:path';
import { ProjectLoadError } from '../../lib/projects/index.ts';
import { dropTestDatabase } from '../helpers/service.ts';
import { migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

/** Route entries (JavaScript source) in one project's route file; `ok` is a handler. */
function projectWith(...routes: string[]): { projectsDir: string; file: string } {
  const source = `const ok = (req, res) => res.send('ok');\nexport default [\n${routes.map((route) => `  ${route},`).join('\n')}\n];\n`;
  const root = writeTree({ 'projects/shop/api/routes.js': source }, 'e2-schemas');
  return { projectsDir: path.join(root, 'projects'), file: path.join(root, 'projects', 'shop', 'api', 'routes.js') };
}

test('every mistake in summary, description, tags and schema is in the start-up report, naming route and part', async (t) => {
  const { projectsDir, file } = projectWith(
    "{ method: 'GET', path: '/a', function: ok, summary: 3, description: ['x'], tags: 'shop' }",
    "{ method: 'POST', path: '/b', function: ok, schema: 'body' }",
    "{ method: 'POST', path: '/c', function: ok, schema: { bdy: {}, body: { type: 'numbr' } } }",
    "{ method: 'POST', path: '/d', function: ok, schema: { body: { type: 'object', requird: ['amount'] } } }",
    "{ method: 'POST', path: '/e', function: ok, schema: { body: 'number', query: [] } }",
    // Integer-like keys come first in a JavaScript object, so "600" is reported before "2xx".
    "{ method: 'GET', path: '/f', function: ok, schema: { responses: { '2xx': { type: 'object' }, 200: { type: 'object' }, 600: {} } } }",
    "{ method: 'GET', path: '/items/:id', function: ok, schema: { params: { type: 'object', properties: { idd: { type: 'string' } } } } }",
    "{ method: 'GET', path: '/g', function: ok, schema: { query: { type: 'string' } } }",
    "{ method: 'GET', path: '/h', function: ok, schema: { query: { '~standard': { version: 1, vendor: 'zod', validate: () => ({ value: 1 }) } } } }",
    "{ method: 'GET', path: '/i', function: ok, schema: { body: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' } } }",
  );
  const error = await t.throwsAsync(startWithProjects(t, projectsDir), { instanceOf: ProjectLoadError });
  t.deepEqual(error?.message.split('\n'), [
    'invalid project routes (15 problems):',
    `  ${file} #0 GET /a: summary must be a string (got number)`,
    `  ${file} #0 GET /a: description must be a string (got array)`,
    `  ${file} #0 GET /a: tags must be an array of non-empty strings (got string)`,
    `  ${file} #1 POST /b: schema must be an object of params, query, body and responses (got string)`,
    `  ${file} #2 POST /c: schema: unknown key "bdy" (expected params, query, body, responses)`,
    `  ${file} #2 POST /c: schema.body is not a valid JSON Schema: at /type: must be equal to one of the allowed values`,
    `  ${file} #3 POST /d: schema.body is not a valid JSON Schema: strict mode: unknown keyword: "requird"`,
    `  ${file} #4 POST /e: schema.query must be a JSON Schema object or a zod schema (got array)`,
    `  ${file} #4 POST /e: schema.body must be a JSON Schema object or a zod schema (got string)`,
    `  ${file} #5 GET /f: schema.responses: "600" is not a status code (100-599)`,
    `  ${file} #5 GET /f: schema.responses: "2xx" is not a status code (100-599)`,
    `  ${file} #6 GET /items/:id: schema.params names "idd", not a parameter of the path (its parameters: :id)`,
    `  ${file} #7 GET /g: schema.query must describe an object (its type is "string")`,
    `  ${file} #8 GET /h: schema.query is a validator schema that cannot describe itself as JSON Schema (zod 3?): use zod 4, or write JSON Schema`,
    `  ${file} #9 GET /i: schema.body declares $schema "http://json-schema.org/draft-07/schema#": write draft 2020-12 (OpenAPI 3.1's dialect) and leave $schema out`,
  ]);
});

test('well-formed documentation and schemas load, JSON Schema and zod alike', async (t) => {
  const zod = new URL(import.meta.resolve('zod')).href;
  const root = writeTree({
    'projects/shop/api/routes.js': `import { z } from ${JSON.stringify(zod)};
const ok = (req, res) => res.send('ok');
export default [
  { method: 'POST', path: '/orders/:id', function: ok, summary: 'Place an order', description: 'Long text.', tags: ['orders'],
    schema: {
      params: { type: 'object', properties: { id: { type: 'integer' } } },
      query: z.object({ dryRun: z.enum(['yes', 'no']).optional() }),
      body: { type: 'object', required: ['amount'], properties: { amount: { type: 'number', example: 3 }, email: { type: 'string', format: 'email' } } },
      responses: { 201: z.object({ id: z.string() }), 404: { type: 'object', properties: { error: { type: 'string' } } } },
    } },
];
`,
  });
  const service = await startWithProjects(t, path.join(root, 'projects'));
  t.is((await service.fetch('/api/shop/orders/1', { method: 'POST' })).status, 401);
});
