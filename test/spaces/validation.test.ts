import test from 'ava';
import { InvalidRequest } from '../../lib/core/errors.ts';
import { partProblems } from '../../lib/routes/request-validation.ts';
import { validatorCheck } from '../../lib/routes/standard-schema.ts';
import { spaceAccessOf } from '../../lib/spaces/access.ts';
import { createSpaceBody, isSpaceName, replaceSpaceBody } from '../../lib/spaces/validation.ts';

/** The body as the routes' schema step checks it: the 400 it answers, or undefined when the body passes. */
async function rejection(schema: typeof createSpaceBody | typeof replaceSpaceBody, body: unknown): Promise<{ status: unknown; message: string } | undefined> {
  const problems = await partProblems('body', validatorCheck(schema), body);
  if (problems.length === 0) return undefined;
  const error = new InvalidRequest(problems);
  return { status: error.status, message: error.message };
}
const creating = (body: unknown) => rejection(createSpaceBody, body);
const replacing = (body: unknown) => rejection(replaceSpaceBody, body);

const nfcCafe = 'caf\u00e9';
const nfdCafe = 'cafe\u0301';

test('valid names: letters of any script, digits, space, _ . -', async (t) => {
  for (const name of ['a', '0', 'Payroll 2024', 'x_y.z-w', 'Ünïcödé', 'данные', '数据', nfcCafe, nfdCafe, 'a'.repeat(64), 'é'.repeat(64), 'trailing ']) {
    t.true(isSpaceName(name), name);
    t.is(await creating({ name }), undefined, name);
  }
});

test('invalid names name the field', async (t) => {
  const cases: Array<[unknown, string]> = [
    ['', 'name must be 1 to 64 characters'],
    ['a'.repeat(65), 'name must be 1 to 64 characters'],
    ['é'.repeat(65), 'name must be 1 to 64 characters'],
    [' leading', 'name may hold only'],
    ['_leading', 'name may hold only'],
    ['.hidden', 'name may hold only'],
    ['a/b', 'name may hold only'],
    ['tab\there', 'name may hold only'],
    ['nul\u0000', 'name may hold only'],
    ['emoji😀', 'name may hold only'],
    ['no\u00a0break', 'name may hold only'],
    [null, 'name must be a string'],
    [42, 'name must be a string'],
    [['a'], 'name must be a string'],
    [undefined, 'name is required'],
  ];
  for (const [name, message] of cases) {
    const failure = await creating(name === undefined ? {} : { name });
    t.is(failure?.status, 400);
    t.true(failure?.message.startsWith(`body.${message.replace(' ', ': ')}`), `${JSON.stringify(name)}: ${failure?.message}`);
  }
});

test('lengths count code points, not UTF-16 units', async (t) => {
  const name = '𝒜'.repeat(64);
  t.is(name.length, 128);
  t.is(await creating({ name }), undefined);
  t.is((await creating({ name: `${name}𝒜` }))?.message, 'body.name: must be 1 to 64 characters');
  t.is(await creating({ name: 'a', schemas: ['𝒜'.repeat(128)] }), undefined);
  t.is((await creating({ name: 'a', schemas: ['𝒜'.repeat(129)] }))?.message, 'body.schemas[0]: must be at most 128 characters');
});

test('schemas: optional on create, distinct, non-empty, at most 128 code points and 1000 entries', async (t) => {
  t.is(await creating({ name: 'a', schemas: ['x', 'X', 'é'.repeat(128)] }), undefined);
  t.is(await creating({ name: 'a', schemas: Array.from({ length: 1000 }, (_, index) => `s${index}`) }), undefined);
  const cases: Array<[unknown, string]> = [
    [null, 'schemas must be an array of strings'],
    ['x', 'schemas must be an array of strings'],
    [{ 0: 'x' }, 'schemas must be an array of strings'],
    [['a', 1], 'schemas[1] must be a string'],
    [['a', null], 'schemas[1] must be a string'],
    [['a', ''], 'schemas[1] must not be empty'],
    [['a', 'é'.repeat(129)], 'schemas[1] must be at most 128 characters'],
    [['a', 'b', 'a'], 'schemas[2] repeats "a"'],
    [[nfcCafe, nfdCafe, nfcCafe], `schemas[2] repeats "${nfcCafe}"`],
    [['nul\u0000'], 'schemas[0] must not contain NUL or unpaired surrogates'],
    [['\ud800'], 'schemas[0] must not contain NUL or unpaired surrogates'],
    [Array.from({ length: 1001 }, (_, index) => `s${index}`), 'schemas must have at most 1000 entries'],
  ];
  for (const [schemas, message] of cases) {
    const failure = await creating({ name: 'a', schemas });
    t.is(failure?.status, 400);
    t.is(failure?.message, `body.${message.replace(/ (?=must|repeats)/, ': ')}`, JSON.stringify(schemas).slice(0, 40));
  }
});

test('NFC and NFD spellings are distinct schemas', async (t) => {
  t.is(await creating({ name: 'a', schemas: [nfcCafe, nfdCafe] }), undefined);
});

test('the body must be a JSON object without unknown fields', async (t) => {
  for (const body of [undefined, null, '', 'text', 7, ['name']]) {
    t.is((await creating(body))?.message, 'body: must be a JSON object', JSON.stringify(body));
  }
  t.is((await creating({ name: 'a', owner: 'x' }))?.message, 'body: unknown field: owner');
  t.is((await creating({ name: 'a', owner: 'x', kind: 1 }))?.message, 'body: unknown fields: owner, kind');
  t.is((await replacing({ schemas: [], createdAt: 'x' }))?.message, 'body: unknown field: createdAt');
});

test('replace: schemas required, a name allowed (the handler refuses another one, test/spaces/api.test.ts)', async (t) => {
  t.is(await replacing({ schemas: ['x'] }), undefined);
  t.is(await replacing({ name: 'a', schemas: [] }), undefined);
  t.is((await replacing({}))?.message, 'body.schemas: is required');
  t.is((await replacing({ schemas: null }))?.message, 'body.schemas: must be an array of strings');
  t.is((await replacing({ name: null, schemas: [] }))?.message, 'body.name: must be a string');
});

test('access: admins see everything whatever their lists say', (t) => {
  t.deepEqual(spaceAccessOf({ role: 'admin', spaces: ['x'], schemas: [] }), { admin: true, spaces: { all: true }, schemas: { all: true } });
});

test('access: an empty or absent space list is every space; a list restricts', (t) => {
  t.deepEqual(spaceAccessOf({ role: 'member' }).spaces, { all: true });
  t.deepEqual(spaceAccessOf({ role: 'member', spaces: [] }).spaces, { all: true });
  t.deepEqual(spaceAccessOf({ role: 'member', spaces: ['a', 'gone'] }).spaces, { all: false, names: ['a', 'gone'] });
  t.deepEqual(spaceAccessOf({ role: 'member', spaces: [7] }).spaces, { all: false, names: [] }, 'a malformed list grants nothing');
  t.deepEqual(spaceAccessOf({ role: 'member', spaces: 'a' }).spaces, { all: false, names: [] });
});

test('access: ["*"] reads every schema; an empty or absent list reads none', (t) => {
  t.deepEqual(spaceAccessOf({ role: 'member', schemas: ['*'] }).schemas, { all: true });
  t.deepEqual(spaceAccessOf({ role: 'member' }).schemas, { all: false, names: [] });
  t.deepEqual(spaceAccessOf({ role: 'member', schemas: [] }).schemas, { all: false, names: [] });
  t.deepEqual(spaceAccessOf({ role: 'member', schemas: ['hr', 'it'] }).schemas, { all: false, names: ['hr', 'it'] });
  t.false(spaceAccessOf({ role: 'superuser' }).admin);
});
