import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';
import { fixtureProjects, json, startWithProjects, tokenFor } from '../helpers/projects.ts';
import { schemaRefusal } from '../helpers/refusals.ts';

let service: ServiceUnderTest;
let bearer: Record<string, string>;
test.before(async () => {
  service = await startWithProjects(undefined, fixtureProjects('schemas'));
  bearer = { authorization: `Bearer ${await tokenFor(service)}` };
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

const JSON_TYPE = { 'content-type': 'application/json' };

/** POSTs `body` as JSON; a string is sent as it is (malformed JSON). */
function post(path: string, body: unknown, headers: Record<string, string> = bearer): Promise<Response> {
  return service.fetch(path, { method: 'POST', headers: { ...JSON_TYPE, ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

async function answer(response: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  return { status: response.status, body: await json(response) };
}

/** The 400 of a declared schema's problems, each written `path: message`. */
function refused(...problems: string[]) {
  return { status: 400, body: schemaRefusal(...problems) };
}

test('a body that breaks its JSON Schema is 400 naming the field; the handler never runs', async (t) => {
  const cases: Array<[unknown, string]> = [
    [{ lines: [] }, 'body.amount: is required'],
    [{ amount: 'ten', lines: [] }, 'body.amount: must be a number'],
    [{ amount: -1, lines: [] }, 'body.amount: must be >= 0'],
    [{ amount: 1, lines: [], currency: 'GBP' }, 'body.currency: must be one of "EUR", "USD"'],
    [{ amount: 1, lines: [{ sku: 'a' }, {}] }, 'body.lines[1].sku: is required'],
    [{ amount: 1, lines: [], note: 'x' }, 'body.note: is not allowed'],
    [[1, 2], 'body: must be an object'],
  ];
  for (const [body, error] of cases) {
    t.deepEqual(await answer(await post('/api/shop/orders', body)), refused(error), JSON.stringify(body));
  }
});

test('a body without a type the parsers read is undefined, and fails an object schema', async (t) => {
  const response = await service.fetch('/api/shop/orders', { method: 'POST', headers: bearer });
  t.deepEqual(await answer(response), refused('body: must be an object'));
});

test('a valid body reaches the handler as it was sent', async (t) => {
  const body = { amount: 12.5, currency: 'EUR', lines: [{ sku: 'A-1' }] };
  const { status, body: echoed } = await answer(await post('/api/shop/orders', body));
  t.is(status, 200);
  t.deepEqual(echoed.body, body);
});

test('a zod schema checks the body with zod, its message after the field', async (t) => {
  t.deepEqual(await answer(await post('/api/shop/zod-orders', { amount: '3' })), refused('body.amount: Invalid input: expected number, received string'));
  t.deepEqual(await answer(await post('/api/shop/zod-orders', { amount: 3, note: 'x'.repeat(21) })), refused('body.note: Too big: expected string to have <=20 characters'));
  const valid = await answer(await post('/api/shop/zod-orders', { amount: 3, extra: true }));
  t.is(valid.status, 200);
  t.deepEqual(valid.body.body, { amount: 3, extra: true }, 'the handler gets the body as sent, not zod’s stripped copy');
});

test('authentication comes first: no token is 401 whatever the body, and a malformed one is never read', async (t) => {
  t.is((await post('/api/shop/orders', { amount: 'ten' }, {})).status, 401);
  t.is((await post('/api/shop/orders', '{"amount":', {})).status, 401);
  t.deepEqual(await answer(await post('/api/shop/orders', '{"amount":')), { status: 400, body: { error: 'malformed JSON body' } });
});

test('custom auth decides first; then the schema applies', async (t) => {
  t.deepEqual(await answer(await post('/api/shop/partner-orders', { amount: 'x' }, {})), { status: 401, body: { error: 'wrong api key' } });
  const key = { 'x-api-key': 'open-sesame' };
  t.deepEqual(await answer(await post('/api/shop/partner-orders', { amount: 'x' }, key)), refused('body.amount: Invalid input: expected number, received string'));
  const passed = await answer(await post('/api/shop/partner-orders', { amount: 2 }, key));
  t.is(passed.status, 200);
  t.deepEqual(passed.body.locals, { authenticated: true });
});

test('a public route checks its body too', async (t) => {
  t.deepEqual(await answer(await post('/api/shop/public-orders', { amount: 1 }, {})), refused('body.lines: is required'));
});

test('params and query are checked as their strings coerce; the handler gets them as sent', async (t) => {
  t.deepEqual(await answer(await service.fetch('/api/shop/items/abc', { headers: bearer })), refused('params.id: must be an integer'));
  t.deepEqual(await answer(await service.fetch('/api/shop/items/0', { headers: bearer })), refused('params.id: must be >= 1'));
  t.deepEqual(await answer(await service.fetch('/api/shop/items/7?limit=many', { headers: bearer })), refused('query.limit: must be an integer'));
  const passed = await answer(await service.fetch('/api/shop/items/7?limit=5&tag=a', { headers: bearer }));
  t.is(passed.status, 200);
  t.deepEqual(passed.body.params, { id: '7' });
  t.deepEqual(passed.body.query, { limit: '5', tag: 'a' });
});

test('the query is checked before the body is read', async (t) => {
  const response = await service.fetch('/api/shop/items/7?mode=overwrite', { method: 'PUT', headers: { ...JSON_TYPE, ...bearer }, body: '{"broken":' });
  t.deepEqual(await answer(response), refused('query.mode: Invalid option: expected one of "replace"|"merge"'));
});

test('the 400 is told on the request line with the request id, not logged as a failure', async (t) => {
  const response = await post('/api/shop/orders', { lines: [] }, { ...bearer, 'x-request-id': 'schema-log-check' });
  t.is(response.status, 400);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const lines = service.logs().filter((entry) => entry.requestId === 'schema-log-check');
  t.is(lines.length, 1);
  t.like(lines[0], { msg: 'request', level: 30, status: 400, error: 'body.amount: is required' });
});

/** What the body parser refuses before any schema: a bare primitive, or a `__proto__` key at any depth. */
function refusedByTheParser(body: unknown): boolean {
  return body === null || typeof body !== 'object' || hasProtoKey(body);
}

function hasProtoKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  return Object.entries(value).some(([key, child]) => key === '__proto__' || hasProtoKey(child));
}

// Invariant: for any JSON body, the route answers 200 exactly when the declared schema accepts
// it (as an independent ajv says), and otherwise 400: naming a field of the body, or, for a bare
// number, string or null, refusing it as strict JSON parsers do (Express's `json()` too), and a
// `__proto__` key as the body parser refuses it.
test('property: the handler runs exactly for the bodies the schema accepts', async (t) => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    required: ['amount', 'lines'],
    properties: {
      amount: { type: 'number', minimum: 0 },
      currency: { enum: ['EUR', 'USD'] },
      lines: { type: 'array', items: { type: 'object', required: ['sku'], properties: { sku: { type: 'string', minLength: 1 } } } },
    },
  };
  const accepts = new Ajv2020({ strict: false }).compile(schema);
  const line = fc.oneof(fc.record({ sku: fc.string() }), fc.dictionary(fc.string(), fc.jsonValue()));
  const order = fc.record(
    { amount: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string()), currency: fc.constantFrom('EUR', 'USD', 'GBP'), lines: fc.array(line, { maxLength: 3 }) },
    { requiredKeys: [] },
  );
  const body = fc.oneof(order, fc.jsonValue({ maxDepth: 2 }), fc.tuple(order, fc.string(), fc.jsonValue()).map(([base, key, value]) => ({ ...base, [key]: value })));
  await fc.assert(
    fc.asyncProperty(body, async (candidate) => {
      const sent = JSON.parse(JSON.stringify(candidate)) as unknown;
      const sending = { method: 'POST', headers: { ...JSON_TYPE, ...bearer }, body: JSON.stringify(sent) };
      const { status, body: reply } = await answer(await service.fetch('/api/shop/orders', sending));
      if (refusedByTheParser(sent)) return status === 400 && (hasProtoKey(sent) ? /__proto__/.test(String(reply.error)) : reply.error === 'JSON body must be an object or an array');
      if (accepts(sent)) return status === 200;
      const expected = /^body[.[:]/;
      return status === 400 && expected.test(String(reply.error));
    }),
    { numRuns: 150 },
  );
  t.pass();
});
