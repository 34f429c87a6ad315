import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { db, DocumentQueryError } from '../../lib/documents/index.ts';
import { createTenant, runInTenant } from '../../lib/tenancy/index.ts';
import { startWithProjects, writeTree } from '../helpers/projects.ts';
import { loginProblems, prototypeChanges, quickLogin, restorePrototypes, snapshotPrototypes, type Login, type PrototypeSnapshot } from '../helpers/prototypes.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

/**
 * The cases of the report, as a route author writes them: a document path through `__proto__`
 * reached `Object.prototype`, and from then on logins failed in every tenant. The key is now
 * refused wherever it appears, with an error that names it; `constructor` and `prototype` are
 * ordinary keys of the document.
 */
const NOTES = [
  { _id: 'n1', text: 'first', meta: { by: 'ann' } },
  { _id: 'n2', text: 'second', meta: { by: 'bob' } },
];

let service: ServiceUnderTest;
let globexLogin: Login;
test.before(async () => {
  const root = writeTree({
    'projects/shop/api/routes.js': [
      "import { db } from 'spaceport';",
      'export default [',
      "  { method: 'GET', path: '/notes', skipAuth: true, function: async (req, res) => res.json(await db.collection('notes').find({}).sort({ _id: 1 }).project({ [req.query.hide]: 0 }).toArray()) },",
      '];',
      '',
    ].join('\n'),
  });
  service = await startWithProjects(undefined, path.join(root, 'projects'), { expert: { spaces: { enabled: true } } });
  for (const tenant of ['acme', 'globex']) await createTenant(service.runtime.knex, tenant);
  globexLogin = await quickLogin(service, 'globex');
});
test.after.always(async () => {
  await service?.close();
  await dropTestDatabase();
});

/** Fresh notes in acme, and the prototypes put back after the test whatever it did to them. */
async function freshNotes(t: ExecutionContext): Promise<PrototypeSnapshot> {
  const snapshot = snapshotPrototypes();
  t.teardown(() => restorePrototypes(snapshot));
  await inAcme(async () => {
    await db.collection('notes').deleteMany({});
    await db.collection('notes').insertMany(structuredClone(NOTES));
  });
  return snapshot;
}

function inAcme<Result>(work: () => Promise<Result>): Promise<Result> {
  return runInTenant(service.runtime, 'acme', work);
}

/** What an operation gave, kept for later: the harm it did is looked at first. */
function outcomeOf(work: () => Promise<unknown>): Promise<{ ok: unknown } | { error: unknown }> {
  return work().then((ok) => ({ ok }), (error: unknown) => ({ error }));
}

function storedNotes(): Promise<unknown> {
  return inAcme(() => db.collection('notes').find({}).sort({ _id: 1 }).toArray());
}

/** The harm of the report first (the prototypes, a login in another tenant), then the refusal. */
async function assertRefusedHarmlessly(t: ExecutionContext, before: PrototypeSnapshot, outcome: { ok: unknown } | { error: unknown }, pathText: string): Promise<void> {
  t.deepEqual(await loginProblems(service, globexLogin), [], 'login and /spaces still work in another tenant');
  t.deepEqual(prototypeChanges(before), [], 'Object.prototype, Array.prototype and Object are as they were');
  t.false('ok' in outcome, `the operation answered ${JSON.stringify('ok' in outcome ? outcome.ok : undefined)} instead of refusing`);
  const error = (outcome as { error: unknown }).error;
  t.true(error instanceof DocumentQueryError, String(error));
  t.regex((error as Error).message, new RegExp(`"__proto__" cannot be a key.*${pathText.replace(/[.]/g, '\\.')}`));
  t.deepEqual(await storedNotes(), NOTES, 'no document changed');
}

test.serial('updateMany with $unset of "__proto__.hasOwnProperty" is refused, naming the key, and logins keep working', async (t) => {
  const before = await freshNotes(t);
  const outcome = await outcomeOf(() => inAcme(() => db.collection('notes').updateMany({}, { $unset: { '__proto__.hasOwnProperty': '' } })));
  await assertRefusedHarmlessly(t, before, outcome, '__proto__.hasOwnProperty');
});

test.serial('a projection from a query parameter (?hide=__proto__.hasOwnProperty) is refused with a logged error; nothing else breaks', async (t) => {
  const before = await freshNotes(t);
  const response = await service.fetch('/api/shop/notes?hide=__proto__.hasOwnProperty', { headers: { tenant: 'acme', 'x-request-id': 'hide-proto' } });
  const body = await response.json();
  t.deepEqual(await loginProblems(service, globexLogin), []);
  t.deepEqual(prototypeChanges(before), []);
  t.is(response.status, 500, JSON.stringify(body));
  const logged = service.logs().find((line) => line.requestId === 'hide-proto' && line.err !== undefined);
  t.like(logged?.err, { type: 'DocumentQueryError' });
  t.regex(String((logged?.err as { message?: unknown } | undefined)?.message), /"__proto__" cannot be a key/);
  const hidden = await service.fetch('/api/shop/notes?hide=meta', { headers: { tenant: 'acme' } });
  t.deepEqual(await hidden.json(), NOTES.map(({ _id, text }) => ({ _id, text })), 'the same route still answers other requests');
});

test.serial('$set of "__proto__.x" is refused, naming the key, instead of being dropped silently', async (t) => {
  const before = await freshNotes(t);
  const outcome = await outcomeOf(() => inAcme(() => db.collection('notes').updateMany({}, { $set: { '__proto__.x': 1 } })));
  await assertRefusedHarmlessly(t, before, outcome, '__proto__.x');
});

test.serial('constructor and prototype are ordinary keys: set, read, filtered, projected and unset like any other', async (t) => {
  const before = await freshNotes(t);
  const notes = db.collection('notes');
  const result = await inAcme(() => notes.updateOne({ _id: 'n1' }, { $set: { 'constructor.prototype.x': 1, 'toString': 'text' } }));
  t.like(result, { matchedCount: 1, modifiedCount: 1 });
  const stored = await inAcme(() => notes.findOne({ 'constructor.prototype.x': 1 }));
  t.deepEqual(stored, { ...NOTES[0], constructor: { prototype: { x: 1 } }, toString: 'text' });
  t.true(Object.hasOwn(stored as object, 'constructor'));
  t.deepEqual(await inAcme(() => notes.find({ _id: 'n1' }).project({ 'constructor.prototype': 1 }).toArray()), [{ _id: 'n1', constructor: { prototype: { x: 1 } } }]);
  await inAcme(() => notes.updateOne({ _id: 'n1' }, { $unset: { 'constructor.prototype': '', toString: '' } }));
  t.deepEqual(await inAcme(() => notes.findOne({ _id: 'n1' })), { ...NOTES[0], constructor: {} });
  t.is({}.constructor, Object);
  t.deepEqual(prototypeChanges(before), []);
});

test.serial('a document holding "__proto__" at any depth is refused, naming the key; nothing is stored', async (t) => {
  const before = await freshNotes(t);
  const fromRequestBody = JSON.parse('{"_id": "n3", "list": [{"ok": 1}, {"deep": {"__proto__": {"admin": true}}}]}') as Record<string, unknown>;
  const outcome = await outcomeOf(() => inAcme(() => db.collection('notes').insertOne(fromRequestBody)));
  await assertRefusedHarmlessly(t, before, outcome, 'list.1.deep.__proto__');
});

test.serial('a filter, sort or projection through "__proto__" is refused, naming the key, even when nothing matches', async (t) => {
  const before = await freshNotes(t);
  const notes = db.collection('notes');
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['__proto__.x', () => notes.countDocuments({ '__proto__.x': 1 })],
    ['meta.__proto__', () => notes.countDocuments({ $or: [{ text: 'first' }, { 'meta.__proto__': { $exists: true } }] })],
    ['__proto__', () => notes.countDocuments({ meta: { $in: [JSON.parse('{"__proto__": {"by": "ann"}}')] } })],
    ['__proto__.toString', () => notes.find({}).sort({ '__proto__.toString': 1 }).toArray()],
    ['__proto__', () => notes.findOne({ _id: 'none' }, { projection: { ['__proto__']: 0 } })],
  ];
  for (const [pathText, operation] of cases) await assertRefusedHarmlessly(t, before, await outcomeOf(() => inAcme(operation)), pathText);
});
