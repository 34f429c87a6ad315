import test from 'ava';
import fc from 'fast-check';
import type { RouteHandler } from '../../lib/bridge/index.ts';
import { bothAppsForFile, MOUNT, type RouteCase } from '../helpers/bridge-apps.ts';
import { answerOf, sameAnswer } from '../helpers/bridge-compare.ts';

/**
 * Invariant: for any Accept header, `res.format` answers as Express 5.3 does (same status,
 * type, body and Vary; 406 as spaceport's JSON); for any callback parameter and any JSON value,
 * `res.jsonp` answers byte for byte as Express does.
 */
const formats: RouteHandler = (_req, res) =>
  res.format({
    'text/plain': () => res.send('plain'),
    html: () => res.send('<p>html</p>'),
    'application/json; q=0.5': () => res.json({ json: true }),
    'application/vnd.api+json': () => res.send('{"api":true}'),
    xml: () => res.send('<xml/>'),
  });

const formatsWithDefault: RouteHandler = (_req, res) => res.format({ text: () => res.send('text'), json: () => res.json(['json']), default: () => res.send('default') });

/** The value to answer comes in a header, base64url JSON; no header is `undefined`. */
const jsonpOfHeader: RouteHandler = (req, res) => {
  const encoded = req.get('x-value');
  res.jsonp(typeof encoded === 'string' ? JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) : undefined);
};

const routes: RouteCase[] = [
  { method: 'get', path: '/format', handlers: [formats] },
  { method: 'get', path: '/format-default', handlers: [formatsWithDefault] },
  { method: 'get', path: '/jsonp', handlers: [jsonpOfHeader] },
];

const apps = bothAppsForFile(routes);

async function answersAgree(pathname: string, init: RequestInit, headers: readonly string[]): Promise<boolean> {
  const [expected, actual] = await Promise.all([answerOf(apps.express(), `${MOUNT}${pathname}`, init, headers), answerOf(apps.bridge(), `${MOUNT}${pathname}`, init, headers)]);
  return sameAnswer(expected, actual);
}

const quality = fc.integer({ min: 0, max: 1000 }).map((thousandths) => `q=${(thousandths / 1000).toString().replace(/^0\./, '.')}`);
const parameter = fc.oneof(quality, fc.constantFrom('charset=utf-8', 'level=1', 'foo=bar', 'q=', 'q=x'));
const mediaRange = fc
  .tuple(
    fc.constantFrom('text', 'application', 'image', '*', 'foo'),
    fc.constantFrom('plain', 'html', 'json', 'xml', 'vnd.api+json', '*', 'bar', 'HTML'),
    fc.array(parameter, { maxLength: 2 }),
    fc.constantFrom(';', '; ', ' ; '),
  )
  .map(([type, subtype, parameters, separator]) => [`${type}/${subtype}`, ...parameters].join(separator));
const acceptHeader = fc.oneof(
  fc.array(mediaRange, { minLength: 1, maxLength: 5 }).map((ranges) => ranges.join(', ')),
  fc.string({ maxLength: 30 }).filter((text) => /^[\t\x20-\x7e]*$/.test(text)),
);

test('res.format answers as Express for any Accept header', async (t) => {
  await fc.assert(
    fc.asyncProperty(acceptHeader, fc.constantFrom('/format', '/format-default'), async (accept, pathname) =>
      answersAgree(pathname, { headers: { accept } }, ['vary', 'content-length']),
    ),
    { numRuns: 150 },
  );
  t.pass();
});

const awkwardText = fc.string({ unit: fc.constantFrom('a', 'Z', '0', '_', '$', '.', '[', ']', '(', ')', ';', ' ', '\u2028', '\u2029', 'é', '"', '\\', '/', '*', '<'), maxLength: 12 });
const callbackQuery = fc.oneof(
  awkwardText.map((name) => `?callback=${encodeURIComponent(name)}`),
  fc.tuple(awkwardText, awkwardText).map(([first, second]) => `?callback=${encodeURIComponent(first)}&callback=${encodeURIComponent(second)}`),
  fc.constantFrom('', '?callback[a]=x', '?other=1', '?callback'),
  fc.string({ maxLength: 12 }).map((name) => `?callback=${encodeURIComponent(name)}`),
);
const jsonpValue = fc.option(fc.oneof(fc.jsonValue({ maxDepth: 2 }), awkwardText), { nil: undefined });

test('res.jsonp answers as Express for any callback and value', async (t) => {
  await fc.assert(
    fc.asyncProperty(callbackQuery, jsonpValue, async (query, value) => {
      const headers: Record<string, string> = value === undefined ? {} : { 'x-value': Buffer.from(JSON.stringify(value), 'utf8').toString('base64url') };
      return answersAgree(`/jsonp${query}`, { headers }, ['x-content-type-options', 'content-length', 'etag']);
    }),
    { numRuns: 200 },
  );
  t.pass();
});
