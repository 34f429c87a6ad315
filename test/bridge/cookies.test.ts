import test from 'ava';
import fc from 'fast-check';
import type { RouteHandler } from '../../lib/bridge/index.ts';
import { bothAppsForFile, MOUNT, type RouteCase } from '../helpers/bridge-apps.ts';
import { answerOf, sameAnswer } from '../helpers/bridge-compare.ts';
import { parseCookies } from '../helpers/bridge-member-cases.ts';

/**
 * Invariant: for any name, value and options, `res.cookie` writes the `Set-Cookie` Express 5.3
 * writes, or fails (500) where Express fails; signed or not, with or without cookie-parser's
 * secret on `req`.
 */
interface CookieCall {
  name: string;
  value: unknown;
  options: Record<string, unknown>;
}

/** The call comes in a header, base64url JSON. */
const cookieOfHeader: RouteHandler = (req, res) => {
  const call = JSON.parse(Buffer.from(String(req.get('x-cookie')), 'base64url').toString('utf8')) as CookieCall;
  res.cookie(call.name, call.value, call.options).end();
};

const routes: RouteCase[] = [
  { method: 'get', path: '/cookie', handlers: [cookieOfHeader] },
  { method: 'get', path: '/with-secret', handlers: [parseCookies, cookieOfHeader] },
];

const apps = bothAppsForFile(routes);

const text = (units: string[], maxLength = 8) => fc.string({ unit: fc.constantFrom(...units), maxLength });
const NAME_UNITS = ['a', 'Z', '0', '-', '_', '!', '#', '$', '(', ')', '@', ',', ';', '=', ' ', '"', '/', '[', 'é', '\t'];
const VALUE_UNITS = ['a', ' ', ';', '=', '"', 'é', '%', '\u2028', '{', ','];

const cookieCall: fc.Arbitrary<CookieCall> = fc.record({
  name: text(NAME_UNITS),
  value: fc.oneof(text(VALUE_UNITS, 12), fc.jsonValue({ maxDepth: 1 })),
  options: fc.record(
    {
      maxAge: fc.oneof(fc.integer({ min: -1e6, max: 1e10 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom('1000', 'abc', '', '1e3', null, true)),
      path: fc.oneof(fc.constantFrom('/x', '/', null), text(['/', 'a', ';', ' ', 'é'])),
      domain: fc.constantFrom('example.com', '.example.com', 'bad domain', 'EXAMPLE.com', ''),
      httpOnly: fc.boolean(),
      secure: fc.boolean(),
      partitioned: fc.boolean(),
      sameSite: fc.constantFrom(true, false, 'lax', 'Strict', 'none', 'bogus'),
      priority: fc.constantFrom('low', 'Medium', 'HIGH', 'bogus'),
      signed: fc.boolean(),
    },
    { requiredKeys: [] },
  ),
});

test('res.cookie writes what Express writes, or fails where Express fails', async (t) => {
  await fc.assert(
    fc.asyncProperty(cookieCall, fc.constantFrom('/cookie', '/with-secret'), async (call, pathname) => {
      const init = { headers: { 'x-cookie': Buffer.from(JSON.stringify(call), 'utf8').toString('base64url') } };
      const url = `${MOUNT}${pathname}`;
      const [expected, actual] = await Promise.all([answerOf(apps.express(), url, init, ['set-cookie']), answerOf(apps.bridge(), url, init, ['set-cookie'])]);
      return sameAnswer(expected, actual);
    }),
    { numRuns: 300 },
  );
  t.pass();
});
