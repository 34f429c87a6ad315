import fc from 'fast-check';

/** A request body and the Content-Type that goes with it (undefined: no header). */
export interface FuzzBody {
  readonly kind: string;
  readonly contentType: string | undefined;
  readonly bytes: Buffer;
}

/** What a route reads from its body, so the fuzzer sends near misses as well as noise. */
export type BodyShape = 'none' | 'login' | 'account' | 'space' | 'upload';

const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Strings a caller may send anywhere: ASCII, any Unicode, control characters. */
export const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', 'alice', '../../etc/passwd', '%00', '\u0000', '\ud800', '😀', 'a'.repeat(300), '$ne', '{"$ne":""}'),
);

/** JSON values other than strings, where a string belongs. */
const notAString = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1e308, [], {}, { $ne: '' }, { $gt: '' }, ['alice']),
  fc.jsonValue({ maxDepth: 3 }),
);

const field = (valid: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: anyText, weight: 2 }, { arbitrary: notAString, weight: 1 });

const shapedValues: Record<Exclude<BodyShape, 'none' | 'upload'>, (password: string) => fc.Arbitrary<unknown>> = {
  login: (password) =>
    fc.record({ username: field(fc.constantFrom('alice', 'bob')), password: field(fc.constant(password)) }, { requiredKeys: [] }),
  account: () => fc.record({ EMPLOYEE_ID: field(fc.constantFrom('alice', 'bob', 'nobody')) }, { requiredKeys: [] }),
  space: () =>
    fc.record(
      { name: field(fc.stringMatching(/^[A-Za-z0-9][\w .-]{0,20}$/)), schemas: fc.oneof(fc.array(anyText, { maxLength: 5 }), notAString) },
      { requiredKeys: [] },
    ),
};

/** JSON texts that try to reach `Object.prototype` through a parser, a merge or a copy. */
const PROTOTYPE_PAYLOADS = [
  '{"__proto__":{"polluted":"yes"}}',
  '{"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"EMPLOYEE_ID":"alice","__proto__":{"polluted":"yes"}}',
  '{"username":"alice","password":"x","__proto__":{"isAdmin":true}}',
  '{"name":"p1","schemas":["a"],"__proto__":{"polluted":"yes"}}',
  '{"name":"p2","schemas":[],"constructor":{"prototype":{"polluted":"yes"}}}',
  '{"a":[{"__proto__":{"polluted":"yes"}}],"b":{"c":{"__proto__":{"polluted":"yes"}}}}',
  '{"__proto__":null}',
  '{"__proto__":[]}',
  '{"prototype":{"polluted":"yes"}}',
  '{"EMPLOYEE_ID":{"__proto__":{"polluted":"yes"}}}',
  '[{"__proto__":{"polluted":"yes"}}]',
];

const MALFORMED_JSON = ['{', '}', '{"a":', '[1,2', '{"a":1}}', "{'a':1}", 'nul', 'undefined', '{"a":NaN}', '{"a":1,}', '\u0000', ' ', '"unterminated', '{"a":"\\x"}', '{"a":"\\ud800"}', '1e99999'];

/** Byte sequences that are not UTF-8: a lone continuation byte, overlong forms, a surrogate, a cut sequence. */
const INVALID_UTF8 = [[0xff, 0xfe], [0xc0, 0xaf], [0xc0, 0xae, 0xc0, 0xae], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]];

const invalidUtf8Json = fc
  .tuple(fc.constantFrom(...INVALID_UTF8), fc.constantFrom('EMPLOYEE_ID', 'username', 'name', 'x'))
  .map(([bytes, key]) => Buffer.concat([Buffer.from(`{"${key}":"`), Buffer.from(bytes), Buffer.from('"}')]));

/** Nesting deep enough to break a recursive walker; at most ~1 MB. */
const deepJson = fc
  .tuple(fc.constantFrom('array', 'object', 'value'), fc.integer({ min: 100, max: 200_000 }))
  .map(([kind, depth]) => {
    if (kind === 'array') return `${'['.repeat(depth)}${']'.repeat(depth)}`;
    if (kind === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    return `{"EMPLOYEE_ID":${'['.repeat(depth)}"alice"${']'.repeat(depth)}}`;
  });

/** Around the 1 MB body limit: just under, at, and over it. */
const hugeJson = fc.integer({ min: -64, max: 64 }).map((offset) => `{"x":"${'a'.repeat(1_048_576 - 8 + offset)}"}`);

const FORMS = ['__proto__[polluted]=yes', 'constructor[prototype][polluted]=yes', 'a[__proto__][polluted]=yes', 'EMPLOYEE_ID=alice', 'EMPLOYEE_ID[]=a&EMPLOYEE_ID[]=b', 'EMPLOYEE_ID[$ne]=', 'a=%ff%fe', '=&&==', '%', 'username=alice&password=x'];

function jsonBody(kind: string, text: fc.Arbitrary<string | Buffer>): fc.Arbitrary<FuzzBody> {
  return text.map((value) => ({ kind, contentType: JSON_TYPE, bytes: Buffer.from(value) }));
}

/** Bodies for a route: well-shaped ones with wrong values, then every kind of noise. */
export function fuzzBody(shape: BodyShape, password: string): fc.Arbitrary<FuzzBody> {
  const shaped =
    shape === 'none' || shape === 'upload'
      ? fc.constant<FuzzBody>({ kind: 'empty', contentType: undefined, bytes: Buffer.alloc(0) })
      : jsonBody(`${shape} JSON`, shapedValues[shape](password).map((value) => JSON.stringify(value)));
  return fc.oneof(
    { arbitrary: shaped, weight: 6 },
    { arbitrary: multipartBody, weight: shape === 'upload' ? 8 : 1 },
    { arbitrary: jsonBody('random JSON', fc.json({ maxDepth: 4 })), weight: 2 },
    { arbitrary: jsonBody('prototype keys', fc.constantFrom(...PROTOTYPE_PAYLOADS)), weight: 3 },
    { arbitrary: jsonBody('malformed JSON', fc.constantFrom(...MALFORMED_JSON)), weight: 2 },
    { arbitrary: jsonBody('invalid UTF-8', invalidUtf8Json), weight: 2 },
    { arbitrary: jsonBody('deep JSON', deepJson), weight: 1 },
    { arbitrary: jsonBody('huge JSON', hugeJson), weight: 1 },
    { arbitrary: fc.constantFrom(...FORMS).map((form): FuzzBody => ({ kind: 'form', contentType: FORM_TYPE, bytes: Buffer.from(form) })), weight: 1 },
    { arbitrary: otherTypedBody, weight: 1 },
  );
}

/** Text, binary, gibberish and mislabelled bodies. */
const otherTypedBody = fc
  .tuple(
    fc.constantFrom('text/plain', 'application/octet-stream', 'application/json; charset=utf-16', 'application/json; charset=latin1', 'application/x-unknown', 'json', ';;;', 'multipart/form-data'),
    fc.oneof(fc.string({ maxLength: 200 }).map((text) => Buffer.from(text)), fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes))),
  )
  .map(([contentType, bytes]): FuzzBody => ({ kind: `${contentType} body`, contentType, bytes }));

/** Field names and file names that a multipart parser or a file system may choke on. */
const ODD_NAMES = ['file', '__proto__', 'constructor', 'prototype', 'file[]', 'file[0]', '', ' ', 'a"b', 'ü', '😀', '../x', 'x'.repeat(300)];
const ODD_FILE_NAMES = ['a.txt', '../../escape.txt', '..\\..\\escape.txt', '/etc/passwd', '..', '.', '', '.hidden', 'a\u0000b.txt', 'ü😀.txt', 'x'.repeat(300), 'CON', 'a/b/', 'C:\\x\\y.txt', '%2e%2e%2fescape.txt'];

const multipartPart = fc.record({
  name: fc.oneof(fc.constantFrom(...ODD_NAMES), anyText),
  fileName: fc.option(fc.oneof(fc.constantFrom(...ODD_FILE_NAMES), anyText), { nil: undefined }),
  content: fc.oneof(fc.string({ maxLength: 50 }), fc.constant('')),
});

const multipartBody = fc
  .tuple(
    fc.array(multipartPart, { minLength: 0, maxLength: 12 }),
    fc.constantFrom('plainboundary', 'b', '----WebKitFormBoundaryX', ' spaced', 'x'.repeat(71)),
    fc.constantFrom('closed', 'unclosed', 'no boundary parameter', 'garbage inside'),
  )
  .map(([parts, boundary, ending]): FuzzBody => {
    const sections = parts.map((part) => {
      const fileName = part.fileName === undefined ? '' : `; filename="${part.fileName}"`;
      return `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${fileName}\r\nContent-Type: text/plain\r\n\r\n${part.content}\r\n`;
    });
    const close = ending === 'unclosed' ? '' : ending === 'garbage inside' ? `--${boundary}\r\nnot a header\r\n\r\n--${boundary}--\r\n` : `--${boundary}--\r\n`;
    const contentType = ending === 'no boundary parameter' ? 'multipart/form-data' : `multipart/form-data; boundary=${boundary}`;
    return { kind: `multipart (${ending})`, contentType, bytes: Buffer.from(sections.join('') + close, 'utf8') };
  });
