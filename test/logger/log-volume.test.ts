import path from 'node:path';
import test from 'ava';
import { jsonPost } from '../helpers/http.ts';
import { startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

// A caller's request must not be able to make the log grow faster than it sends: an error whose
// text holds what the request sent (a field name in a filter, a value a handler names) was written
// whole, in its message and again in its stack.

let service: ServiceUnderTest;
test.before(async () => {
  const root = writeTree({
    'projects/logs/api/routes.js': `import { db } from 'spaceport';
export default [
  { method: 'POST', path: '/find', skipAuth: true, function: async (req, res) => res.json(await db.collection('things').find(req.body.filter).toArray()) },
  { method: 'POST', path: '/refuse', skipAuth: true, function: (req) => { throw Object.assign(new Error('no such item: ' + req.body.name), { status: 400 }); } },
];
`,
  });
  service = await startWithProjects(undefined, path.join(root, 'projects'));
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

/** Most characters a line about one request may take, whatever the request sent. */
const LINE_CHARS = 16 * 1024;
const HUGE = 'x'.repeat(900_000);

function linesOf(requestId: string): string[] {
  return service
    .logText()
    .split('\n')
    .filter((line) => line.includes(`"requestId":"${requestId}"`));
}

test('an unhandled error whose message holds 900 KB of the request is logged in a line of bounded size, with its start and its stack', async (t) => {
  const response = await service.fetch('/api/logs/find', jsonPost({ filter: { [`$${HUGE}`]: 1 } }, { 'x-request-id': 'huge-operator' }));
  t.is(response.status, 500);
  t.deepEqual(await response.json(), { success: false, message: 'Internal Server Error' });
  const lines = linesOf('huge-operator');
  t.is(lines.length, 2, 'the error line and the request line');
  for (const line of lines) t.true(line.length < LINE_CHARS, `a line of ${line.length} characters`);
  const error = service.logs().find((entry) => entry.requestId === 'huge-operator' && entry.msg === 'unhandled error') as { err: { message: string; stack: string; type: string } };
  t.is(error.err.type, 'DocumentQueryError');
  t.regex(error.err.message, /^filter: unknown operator "\$xxxx.*… \(\d+ more characters\)$/);
  t.regex(error.err.stack, /^DocumentQueryError: filter: unknown operator "\$x{100}.*… \(\d+ more characters\)\n\s+at /, 'the frames are kept');
});

test('a 4xx whose message holds 900 KB of the request is answered with it, and its request line is of bounded size', async (t) => {
  const response = await service.fetch('/api/logs/refuse', jsonPost({ name: HUGE }, { 'x-request-id': 'huge-name' }));
  t.is(response.status, 400);
  t.is(((await response.json()) as { error: string }).error, `no such item: ${HUGE}`);
  const lines = linesOf('huge-name');
  t.is(lines.length, 1);
  t.true((lines[0] as string).length < LINE_CHARS, `a line of ${lines[0]?.length} characters`);
  t.like(JSON.parse(lines[0] as string), { status: 400, route: 'POST /refuse' });
});
