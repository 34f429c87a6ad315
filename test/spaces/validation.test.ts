import test from 'ava';
import { spaceAccessOf } from '../../lib/spaces/access.ts';
import { isSpaceName, parseCreateBody, parseReplaceBody } from '../../lib/spaces/validation.ts';

function rejection(work: () => unknown): { status: unknown; message: string } {
  try {
    work();
  } catch (error) {
    return { status: (error as { status?: unknown }).status, message: (error as Error).message };
  }
  throw new Error('expected a rejection');
}

const nfcCafe = 'caf\u00e9';
const nfdCafe = 'cafe\u0301';

test('valid names: letters of any script, digits, space, _ . -', (t) => {
  for (const name of ['a', '0', 'Payroll 2024', 'x_y.z-w', 'Ünïcödé', 'данные', '数据', nfcCafe, nfdCafe, 'a'.repeat(64), 'é'.repeat(64), 'trailing ']) {
    t.true(isSpaceName(name), name);
    t.deepEqual(parseCreateBody({ name }), { name, schemas: [] });
  }
});

test('invalid names name the field', (t) => {
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
    const failure = rejection(() => parseCreateBody(name === undefined ? {} : { name }));
    t.is(failure.status, 400);
    t.true(failure.message.startsWith(message), `${JSON.stringify(name)}: ${failure.message}`);
  }
});

test('lengths count code points, not UTF-16 units', (t) => {
  const name = '𝒜'.repeat(64);
  t.is(name.length, 128);
  t.deepEqual(parseCreateBody({ name }).name, name);
  t.is(rejection(() => parseCreateBody({ name: `${name}𝒜` })).message, 'name must be 1 to 64 characters');
  t.deepEqual(parseCreateBody({ name: 'a', schemas: ['𝒜'.repeat(128)] }).schemas, ['𝒜'.repeat(128)]);
  t.is(rejection(() => parseCreateBody({ name: 'a', schemas: ['𝒜'.repeat(129)] })).message, 'schemas[0] must be at most 128 characters');
});

test('schemas: optional on create, distinct, non-empty, at most 128 code points and 1000 entries', (t) => {
  t.deepEqual(parseCreateBody({ name: 'a', schemas: ['x', 'X', 'é'.repeat(128)] }).schemas, ['x', 'X', 'é'.repeat(128)]);
  t.deepEqual(parseCreateBody({ name: 'a', schemas: Array.from({ length: 1000 }, (_, index) => `s${index}`) }).schemas.length, 1000);
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
    const failure = rejection(() => parseCreateBody({ name: 'a', schemas }));
    t.is(failure.status, 400);
    t.is(failure.message, message, JSON.stringify(schemas).slice(0, 40));
  }
});

test('NFC and NFD spellings are distinct schemas', (t) => {
  t.deepEqual(parseCreateBody({ name: 'a', schemas: [nfcCafe, nfdCafe] }).schemas, [nfcCafe, nfdCafe]);
});

test('the body must be a JSON object without unknown fields', (t) => {
  for (const body of [undefined, null, '', 'text', 7, ['name']]) {
    t.is(rejection(() => parseCreateBody(body)).message, 'request body must be a JSON object', JSON.stringify(body));
  }
  t.is(rejection(() => parseCreateBody({ name: 'a', owner: 'x' })).message, 'unknown field: owner');
  t.is(rejection(() => parseCreateBody({ name: 'a', owner: 'x', kind: 1 })).message, 'unknown fields: owner, kind');
  t.is(rejection(() => parseReplaceBody({ schemas: [], createdAt: 'x' }, 'a')).message, 'unknown field: createdAt');
});

test('replace: schemas required, the same name allowed, another name refused', (t) => {
  t.deepEqual(parseReplaceBody({ schemas: ['x'] }, 'a'), ['x']);
  t.deepEqual(parseReplaceBody({ name: 'a', schemas: [] }, 'a'), []);
  t.is(rejection(() => parseReplaceBody({}, 'a')).message, 'schemas is required');
  t.is(rejection(() => parseReplaceBody({ schemas: null }, 'a')).message, 'schemas must be an array of strings');
  t.is(rejection(() => parseReplaceBody({ name: 'b', schemas: [] }, 'a')).message, 'name cannot be changed (spaces are not renamed)');
  t.is(rejection(() => parseReplaceBody({ name: nfdCafe, schemas: [] }, nfcCafe)).message, 'name cannot be changed (spaces are not renamed)');
  t.is(rejection(() => parseReplaceBody({ name: null, schemas: [] }, 'a')).message, 'name must be a string');
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
