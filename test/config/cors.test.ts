import test from 'ava';
import { ConfigError, loadConfig } from '../../lib/config/index.ts';
import { originAllowed, parseOriginEntry, type OriginEntry } from '../../lib/config/origins.ts';
import { scratchFolder } from '../helpers/scratch.ts';

const baseEnv = () => ({ JWT_SECRET: 'a-secret-that-is-long-enough', DATA_DIR: scratchFolder('h4-cors') });
const load = (cors: unknown) => loadConfig({ env: baseEnv(), expert: { cors } as never }).config;

test('cors is off unless configured; given, its defaults fill in', (t) => {
  t.is(loadConfig({ env: baseEnv(), expert: {} }).config.cors, undefined);
  t.deepEqual(load({ origins: ['https://app.example.com'] }).cors, { origins: ['https://app.example.com'], credentials: false, exposeHeaders: [] });
  const full = { origins: ['https://app.example.com', '*.example.org', 'http://localhost:5173'], credentials: true, maxAge: 600, exposeHeaders: ['X-Request-Id'] };
  t.deepEqual(load(full).cors, full);
  t.true(Object.isFrozen(load(full).cors?.origins));
});

const invalid: Array<[string, unknown, RegExp]> = [
  ['the any-origin star', { origins: ['*'] }, /cors\.origins\.0: must be an origin such as/],
  ['a URL with a path', { origins: ['https://app.example.com/'] }, /cors\.origins\.0: must be an origin/],
  ['a host without its scheme', { origins: ['app.example.com'] }, /cors\.origins\.0: must be an origin/],
  ['another scheme', { origins: ['ftp://app.example.com'] }, /cors\.origins\.0: must be an origin/],
  ['a pattern over a whole top-level domain', { origins: ['*.com'] }, /cors\.origins\.0: must be an origin/],
  ['a pattern over a whole top-level domain, with its scheme', { origins: ['https://*.io'] }, /cors\.origins\.0: must be an origin/],
  ['no origin at all', { origins: [] }, /cors\.origins: must list at least one origin/],
  ['origins missing', { credentials: true }, /cors\.origins: /],
  ['a non-boolean credentials', { origins: ['https://a.example.com'], credentials: 'yes' }, /cors\.credentials: /],
  ['a negative maxAge', { origins: ['https://a.example.com'], maxAge: -1 }, /cors\.maxAge: /],
  ['an exposed header that is no header name', { origins: ['https://a.example.com'], exposeHeaders: ['X Request'] }, /cors\.exposeHeaders\.0: must be a header name/],
  ['an unknown key', { origins: ['https://a.example.com'], allowOrigins: [] }, /cors\.allowOrigins: unknown key/],
];

for (const [what, cors, message] of invalid) {
  test(`cors with ${what} is refused, the key named`, (t) => {
    const error = t.throws(() => load(cors), { instanceOf: ConfigError });
    t.regex(error.message, message);
  });
}

const entries = (list: string[]) => list.map((entry) => parseOriginEntry(entry) as OriginEntry);

test('an exact origin allows that scheme, host and port only', (t) => {
  const allowed = entries(['https://app.example.com', 'http://localhost:8080']);
  t.true(originAllowed(allowed, 'https://app.example.com'));
  // Only the serialised origin a browser sends; anything else would be echoed back as it came.
  for (const odd of ['https://APP.example.com', 'https://app.example.com:443', 'https://evil.com@app.example.com', 'https://app.example.com/evil', 'https://app.example.com.']) {
    t.false(originAllowed(allowed, odd), odd);
  }
  t.true(originAllowed(allowed, 'http://localhost:8080'));
  t.false(originAllowed(allowed, 'http://app.example.com'));
  t.false(originAllowed(allowed, 'https://app.example.com:8443'));
  t.false(originAllowed(allowed, 'https://evil.app.example.com'));
  t.false(originAllowed(allowed, 'http://localhost:3000'));
  t.false(originAllowed(allowed, 'null'));
});

test('a pattern allows subdomains at any depth, not the domain itself; its scheme if it names one', (t) => {
  const allowed = entries(['https://*.example.com', '*.example.org']);
  t.true(originAllowed(allowed, 'https://a.example.com'));
  t.true(originAllowed(allowed, 'https://a.b.example.com'));
  t.false(originAllowed(allowed, 'http://a.example.com'));
  t.false(originAllowed(allowed, 'https://example.com'));
  t.false(originAllowed(allowed, 'https://badexample.com'));
  t.false(originAllowed(allowed, 'https://a.example.com.evil.net'));
  t.true(originAllowed(allowed, 'http://a.example.org'));
  t.true(originAllowed(allowed, 'https://a.example.org'));
  t.false(originAllowed(allowed, 'https://a.example.org:8443'));
});
