import test from 'ava';
import fc from 'fast-check';
import { deepFreeze } from '../../lib/values/deep-freeze.ts';
import { didYouMean } from '../../lib/values/did-you-mean.ts';
import { isPlainObject } from '../../lib/values/json.ts';
import { postgresAddress } from '../../lib/values/postgres-url.ts';
import { isStorable, isStorableText } from '../../lib/values/storable-text.ts';
import { isTenantName } from '../../lib/values/tenant-name.ts';

test('deepFreeze freezes the value and every object inside it, and returns it', (t) => {
  const value = { a: { b: [{ c: 1 }] }, d: 'text' };
  t.is(deepFreeze(value), value);
  for (const inner of [value, value.a, value.a.b, value.a.b[0]]) t.true(Object.isFrozen(inner));
});

test('isPlainObject: object literals and parsed JSON, not arrays, dates or class instances', (t) => {
  for (const plain of [{}, Object.create(null), JSON.parse('{"a":1}')]) t.true(isPlainObject(plain));
  for (const other of [null, [], new Date(), new (class Thing {})(), 'text', 1]) t.false(isPlainObject(other));
});

test('isStorable refuses NUL and unpaired surrogates in any string or key, at any depth', (t) => {
  t.true(isStorableText('plain ü 😀'));
  t.false(isStorableText('a\u0000b'));
  t.false(isStorableText('\ud800'));
  t.true(isStorable({ a: ['x', { b: 1 }], c: null }));
  t.false(isStorable({ a: [{ b: 'x\u0000' }] }));
  t.false(isStorable({ '\udc00': 1 }));
});

test('a tenant name: a letter or digit first, then up to 62 letters, digits, _ or -', (t) => {
  for (const name of ['default', 'a', 'A-b_9', `a${'b'.repeat(62)}`]) t.true(isTenantName(name), name);
  for (const name of ['', '-a', '_a', 'a b', 'ü', `a${'b'.repeat(63)}`]) t.false(isTenantName(name), name);
});

test('didYouMean suggests a name two neighbouring letters of it swapped (helpdeks: helpdesk), a letter or a case away', (t) => {
  const known = ['helpdesk', 'sample', 'skipAuth'];
  t.is(didYouMean('helpdeks', known), ' (did you mean "helpdesk"?)');
  t.is(didYouMean('skipauth', known), ' (did you mean "skipAuth"?)');
  t.is(didYouMean('sampl', known), ' (did you mean "sample"?)');
  t.is(didYouMean('nothing', known), '');
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), minLength: 2, maxLength: 12 }), fc.nat(), (name, at) => {
      const index = at % (name.length - 1);
      const swapped = `${name.slice(0, index)}${name[index + 1]}${name[index]}${name.slice(index + 2)}`;
      return didYouMean(swapped, [name]) === ` (did you mean "${name}"?)`;
    }),
  );
});

test('postgresAddress reads host, port and database as pg does: host and port parameters win, a socket URL has no host of its own', (t) => {
  t.deepEqual(postgresAddress('postgres://u:p@db.internal:6432/spaceport'), { host: 'db.internal', port: '6432', database: 'spaceport' });
  t.deepEqual(postgresAddress('postgresql://u@/my%20db?host=/run/postgresql'), { host: '/run/postgresql', port: '', database: 'my db' });
  t.deepEqual(postgresAddress('postgres://u@h/db?host=other&port=5433'), { host: 'other', port: '5433', database: 'db' });
  t.deepEqual(postgresAddress('postgres://h'), { host: 'h', port: '', database: '' });
  t.deepEqual(postgresAddress('postgres://u@%2Frun%2Fpostgresql/db'), { host: '/run/postgresql', port: '', database: 'db' });
  t.is(postgresAddress('postgres://h/a%2Fb')?.database, 'a%2Fb', 'pg decodes the name with decodeURI, which keeps %2F');
  t.is(postgresAddress('postgres://h/bad%E0name'), undefined, 'pg cannot read it: URI malformed');
  t.is(postgresAddress('mysql://h/db'), undefined);
});
