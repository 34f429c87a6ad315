import test from 'ava';
import fc from 'fast-check';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { fixtureProjects, json, startWithProjects, tokenFor } from '../helpers/projects.ts';
import { schemaRefusal } from '../helpers/refusals.ts';

/** SPEC §8.13: a declared schema that fails answers 400 `{error, errors: [{path, message}]}`, every field at fault at once. */

let service: ServiceUnderTest;
let bearer: Record<string, string>;
test.before(async () => {
  service = await startWithProjects(undefined, fixtureProjects('problems'));
  bearer = { authorization: `Bearer ${await tokenFor(service)}` };
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

interface Problem {
  path: string;
  message: string;
}
interface Answer {
  status: number;
  body: { error?: string; errors?: Problem[]; [key: string]: unknown };
}

async function send(path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await service.fetch(path, { ...init, headers: { ...bearer, ...(init.headers as Record<string, string>) } });
  return { status: response.status, body: await json(response) };
}

const postJson = (path: string, body: unknown, method = 'POST') => send(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

function form(fields: Record<string, string>, files: Array<[field: string, name: string]> = []): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.append(name, value);
  for (const [field, name] of files) data.append(field, new Blob([`content of ${name}`], { type: 'text/plain' }), name);
  return data;
}

const postForm = (path: string, body: FormData) => send(path, { method: 'POST', body });

/** The 400 of a declared schema's problems, each written `path: message`. */
function refused(...problems: string[]) {
  return { status: 400, body: schemaRefusal(...problems) };
}

test('a JSON Schema body wrong in four places names all four, in the order of the schema', async (t) => {
  const answer = await postJson('/api/forms/signup', { name: '', email: 'not-an-email', age: 'old', tags: ['a', 'b', 'c', 'd'] });
  t.deepEqual(
    answer,
    refused('body.role: is required', 'body.name: must be at least 1 character long', 'body.email: must match format "email"', 'body.age: must be an integer', 'body.tags: must have at most 3 items'),
  );
});

test('a length or a count out of bounds reads as a plain sentence, not as ajv\'s "must NOT have fewer than"', async (t) => {
  const answer = await postJson('/api/forms/signup', { name: 'x'.repeat(21), email: 'ann@example.com', age: 30, role: 'member', tags: ['a', 'b', 'c', 'd'] });
  t.deepEqual(answer, refused('body.name: must be at most 20 characters long', 'body.tags: must have at most 3 items'));
});

test('a zod body wrong in several places names every one, with zod’s messages', async (t) => {
  const answer = await postJson('/api/forms/zod-signup', { name: '', email: 'nope', age: 200, role: 'admin' });
  t.is(answer.status, 400);
  t.deepEqual(
    answer.body.errors?.map((problem) => problem.path),
    ['body.name', 'body.email', 'body.age'],
  );
  t.is(answer.body.error, `body.name: ${answer.body.errors?.[0]?.message}`);
});

test('a body with thousands of wrong items lists the first 100 problems', async (t) => {
  const answer = await postJson('/api/forms/signup', { name: 'ann', email: 'ann@example.com', age: 30, role: 'member', tags: Array.from({ length: 5000 }, (_, index) => index) });
  t.is(answer.status, 400);
  t.is(answer.body.errors?.length, 100);
  t.deepEqual(answer.body.errors?.slice(0, 2), [
    { path: 'body.tags', message: 'must have at most 3 items' },
    { path: 'body.tags[0]', message: 'must be a string' },
  ]);
  t.is(answer.body.errors?.at(-1)?.path, 'body.tags[98]');
});

test('a 1 MB body of 450 000 wrong items is answered its first 100 problems without reading every one (0.7 s of the event loop)', async (t) => {
  const text = JSON.stringify({ name: 'ann', email: 'ann@example.com', age: 30, role: 'member', tags: Array.from({ length: 450_000 }, () => 0) });
  // Beside a pass of JSON.parse over the same text, which costs linear time too, whatever the machine's load.
  const fastest = async (work: () => unknown) => {
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 3; round++) {
      const started = performance.now();
      await work();
      best = Math.min(best, performance.now() - started);
    }
    return best;
  };
  let answer: Answer | undefined;
  const answering = await fastest(async () => {
    answer = await send('/api/forms/signup', { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
  });
  const parsing = await fastest(() => JSON.parse(text));
  t.log(`answered in ${answering.toFixed(0)} ms; JSON.parse of the body ${parsing.toFixed(0)} ms`);
  t.is(answer?.status, 400);
  t.is(answer?.body.errors?.length, 100);
  t.is(answer?.body.errors?.at(-1)?.path, 'body.tags[98]');
  t.true(answering < 50 * parsing, `answered in ${answering.toFixed(0)} ms, parsed in ${parsing.toFixed(0)} ms`);
});

test('a long string checked as format url is refused at once (ajv-formats’ pattern took quadratic time: 80 000 characters, 2.7 s of the event loop)', async (t) => {
  // Against a body of the same size whose URL is short: a loaded machine slows both alike.
  const timed = async (body: Record<string, string>) => {
    const started = performance.now();
    const answer = await postJson('/api/forms/site', body);
    return { answer, took: performance.now() - started };
  };
  const control = await timed({ home: 'http://example.com/', pad: ':'.repeat(80_000) });
  t.is(control.answer.status, 200);
  const long = await timed({ home: `http://${':'.repeat(80_000)}` });
  t.is(long.answer.status, 400);
  t.deepEqual(
    long.answer.body.errors?.map((problem) => problem.path),
    ['body.home'],
  );
  t.true(long.took < 5 * control.took + 100, `answered in ${long.took.toFixed(0)} ms, the same body with a short URL in ${control.took.toFixed(0)} ms`);
  // The format itself is unchanged for URLs of a usual length.
  t.is((await postJson('/api/forms/site', { home: `https://example.com/${'a'.repeat(1500)}?q=1` })).status, 200);
  t.is((await postJson('/api/forms/site', { home: 'https://user:pw@example.com:8443/path' })).status, 200);
  t.is((await postJson('/api/forms/site', { home: 'http://192.168.1.1/' })).status, 400, 'a private address, as ajv-formats refuses it');
  t.is((await postJson('/api/forms/site', { home: 'not a url' })).status, 400);
});

test('a field named by a huge key of the request is named shortened: the 400 is no larger for it', async (t) => {
  const key = 'k'.repeat(200_000);
  const answer = await postJson('/api/forms/signup', { name: 'ann', email: 'ann@example.com', age: 30, role: 'member', [key]: 1, [`${key}2`]: 2 });
  t.is(answer.status, 400);
  t.is(answer.body.errors?.length, 2);
  for (const problem of answer.body.errors ?? []) {
    t.true(problem.path.length <= 300, `a path of ${problem.path.length} characters`);
    t.true(problem.path.startsWith('body.kkkk'));
    t.true(problem.path.endsWith('…'));
    t.is(problem.message, 'is not allowed');
  }
  t.is(answer.body.error, `${answer.body.errors?.[0]?.path}: is not allowed`);
});

test('a message naming every unknown field of a huge body is shortened, its characters kept whole', async (t) => {
  const body: Record<string, unknown> = { name: 'x' };
  for (let index = 0; index < 20_000; index++) body[`𝒜field${index}`] = 1;
  const answer = await send('/api/forms/zod-strict', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  t.is(answer.status, 400);
  const [problem] = answer.body.errors ?? [];
  t.true((problem?.message.length ?? 0) <= 300, `a message of ${problem?.message.length} characters`);
  t.true(problem?.message.includes('𝒜field0'), problem?.message);
  t.notRegex(problem?.message ?? '', /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, 'no half of a character at the cut');
});

test('params, query and body problems come together in one 400, params first', async (t) => {
  const answer = await postJson('/api/forms/teams/blue/members?notify=maybe&page=0', { name: 'ann', email: 'ann@example.com', age: -1, role: 'owner' }, 'PUT');
  t.deepEqual(
    answer,
    refused('params.team: must be an integer', 'query.notify: must be a boolean', 'query.page: must be >= 1', 'body.age: must be >= 0', 'body.role: must be one of "admin", "member"'),
  );
});

test('params and query problems alone answer before any body is read, JSON Schema and zod together', async (t) => {
  const answer = await send('/api/forms/teams/blue?page=zero');
  t.is(answer.status, 400);
  t.deepEqual(
    answer.body.errors?.map((problem) => problem.path),
    ['params.team', 'query.page'],
  );
});

test('a query at fault with a body that cannot be read answers the query’s problems', async (t) => {
  const answer = await send('/api/forms/teams/7/members?page=0', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"name":' });
  t.deepEqual(answer, refused('query.page: must be >= 1'));
});

test('a valid request reaches the handler as sent', async (t) => {
  const body = { name: 'ann', email: 'ann@example.com', age: 30, role: 'member' };
  const answer = await postJson('/api/forms/teams/7/members?notify=true', body, 'PUT');
  t.is(answer.status, 200);
  t.like(answer.body, { params: { team: '7' }, query: { notify: 'true' }, body });
});

test('a multipart route checks its file fields against the files received, its other fields against the rest', async (t) => {
  const accepted = await postForm('/api/forms/attachments', form({ title: 'minutes' }, [['file', 'minutes.pdf']]));
  t.is(accepted.status, 200, JSON.stringify(accepted.body));
  t.deepEqual(accepted.body.files, { file: ['minutes.pdf'] });
  t.deepEqual(accepted.body.body, { title: 'minutes' });
  const withPages = await postForm('/api/forms/attachments', form({ title: 'minutes' }, [['file', 'a.pdf'], ['pages', 'p1.png'], ['pages', 'p2.png']]));
  t.is(withPages.status, 200);
  t.deepEqual(withPages.body.files, { file: ['a.pdf'], pages: ['p1.png', 'p2.png'] });
});

test('a multipart route names a missing file and a missing field together', async (t) => {
  t.deepEqual(await postForm('/api/forms/attachments', form({ note: 'x' })), refused('body.title: is required', 'body.note: is not allowed', 'body.file: is required (a file in a multipart body)'));
  t.deepEqual(await postForm('/api/forms/attachments', form({ title: 'minutes', file: 'text, not a file' })), refused('body.file: is required (a file in a multipart body)'));
});

test('a multipart route refuses two files for one, too many files for a list, and a file under a field it does not name', async (t) => {
  const files: Array<[string, string]> = [['file', 'a.pdf'], ['file', 'b.pdf'], ['pages', '1.png'], ['pages', '2.png'], ['pages', '3.png'], ['extra', 'x.bin']];
  t.deepEqual(
    await postForm('/api/forms/attachments', form({ title: 'minutes' }, files)),
    refused('body.file: must be one file (got 2)', 'body.pages: must hold at most 2 files (got 3)', 'body.extra: is not allowed'),
  );
});

test('a JSON body sent to a multipart route is told the file is missing', async (t) => {
  t.deepEqual(await postJson('/api/forms/attachments', { title: 'minutes', file: 'aGVsbG8=' }), refused('body.file: is required (a file in a multipart body)'));
});

test('a zod body with z.file() takes the file from the files received', async (t) => {
  const accepted = await postForm('/api/forms/zod-attachments', form({ title: 'minutes' }, [['file', 'minutes.pdf']]));
  t.is(accepted.status, 200, JSON.stringify(accepted.body));
  t.deepEqual(accepted.body.files, { file: ['minutes.pdf'] });
  const refusedAnswer = await postForm('/api/forms/zod-attachments', form({ title: '' }));
  t.is(refusedAnswer.status, 400);
  t.deepEqual(
    refusedAnswer.body.errors?.map((problem) => problem.path),
    ['body.title', 'body.file'],
  );
  t.is(refusedAnswer.body.errors?.[1]?.message, 'is required (a file in a multipart body)');
});

/** Each field of the signup schema: a value it accepts, and values that break it for one reason only (or leave it out). */
const FIELDS = {
  name: { valid: fc.string({ minLength: 1, maxLength: 20 }), wrong: fc.constantFrom('', 'x'.repeat(21), 42, null) },
  email: { valid: fc.constantFrom('ann@example.com', 'b.c@d.example'), wrong: fc.constantFrom('nope', '@example.com', 7, false) },
  age: { valid: fc.integer({ min: 0, max: 150 }), wrong: fc.constantFrom(-1, 151, 2.5, '30', null) },
  role: { valid: fc.constantFrom('admin', 'member'), wrong: fc.constantFrom('owner', '', 1) },
  tags: { valid: fc.array(fc.string(), { maxLength: 3 }), wrong: fc.constantFrom(['a', 'b', 'c', 'd'], 'a', {}) },
  active: { valid: fc.boolean(), wrong: fc.constantFrom('yes', 0, null) },
} as const;
const REQUIRED = new Set(['name', 'email', 'age', 'role']);
const MISSING = Symbol('missing');

type FieldName = keyof typeof FIELDS;

/** A signup body with some fields wrong (a required one possibly left out), and which ones. */
const signupBody = fc
  .record(Object.fromEntries(Object.entries(FIELDS).map(([name, field]) => [name, fc.record({ wrong: fc.boolean(), valid: field.valid, bad: fc.oneof(field.wrong, fc.constant(MISSING)) })])))
  .map((choices) => {
    const body: Record<string, unknown> = {};
    const wrong: string[] = [];
    for (const [name, choice] of Object.entries(choices) as Array<[FieldName, { wrong: boolean; valid: unknown; bad: unknown }]>) {
      const leftOut = choice.wrong && choice.bad === MISSING;
      if (choice.wrong && (!leftOut || REQUIRED.has(name))) wrong.push(`body.${name}`);
      if (!choice.wrong) body[name] = choice.valid;
      else if (!leftOut) body[name] = choice.bad;
      else if (!REQUIRED.has(name)) continue;
    }
    return { body, wrong };
  });

// Invariant, for JSON Schema (ajv) and zod alike: a body with k fields wrong, each independently
// of the others, answers 400 with exactly k entries in `errors`, one per wrong field, and `error`
// is the first of them as `path: message`; a body with none wrong reaches the handler.
for (const route of ['/api/forms/signup', '/api/forms/zod-signup']) {
  test(`property: ${route} names each wrong field once, and only those`, async (t) => {
    await fc.assert(
      fc.asyncProperty(signupBody, async ({ body, wrong }) => {
        const answer = await postJson(route, body);
        if (wrong.length === 0) return answer.status === 200;
        const errors = answer.body.errors ?? [];
        const paths = errors.map((problem) => problem.path);
        const [first] = errors;
        return (
          answer.status === 400 &&
          errors.length === wrong.length &&
          [...paths].sort().join() === [...wrong].sort().join() &&
          first !== undefined &&
          answer.body.error === `${first.path}: ${first.message}`
        );
      }),
      { numRuns: 120 },
    );
    t.pass();
  });
}

const validSignup = fc.record(
  Object.fromEntries(Object.entries(FIELDS).map(([name, field]) => [name, field.valid])),
  { requiredKeys: [...REQUIRED] },
);

// Invariant: a body the schema accepts is never refused, whichever optional fields it leaves out.
for (const route of ['/api/forms/signup', '/api/forms/zod-signup']) {
  test(`property: ${route} lets every valid body through`, async (t) => {
    await fc.assert(
      fc.asyncProperty(validSignup, async (body) => (await postJson(route, body)).status === 200),
      { numRuns: 60 },
    );
    t.pass();
  });
}
