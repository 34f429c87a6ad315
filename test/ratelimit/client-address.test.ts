import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { clientGroup } from '../../lib/ratelimit/client-address.ts';
import { rateLimit, type RateLimitOptions } from '../../lib/ratelimit/index.ts';
import type { Runtime } from '../../lib/core/runtime.ts';
import { jsonPost } from '../helpers/http.ts';
import { startSampleService } from '../helpers/sample.ts';
import { entryApp, listenApp, type ListeningApp } from '../helpers/koa-app.ts';
import { serviceForFile, startTestService, type ServiceUnderTest } from '../helpers/service.ts';

/**
 * Per-address limits count a client, not an address (SPEC §17.5): an IPv6 client holds a whole
 * network (a /64 by default, `rateLimit.ipv6Prefix`), and an IPv4 client seen through an IPv6
 * socket (`::ffff:203.0.113.9`) is the same client as `203.0.113.9`.
 */
let service: ServiceUnderTest;

serviceForFile({}, (started) => {
  service = started;
});

function uniqueName(): string {
  return `test-${randomBytes(4).toString('hex')}`;
}

/** The real entry and tenant step, then `options`' limit, then 200; listening on `host`. */
async function limitedApp(t: ExecutionContext, options: RateLimitOptions, settings: { proxy?: boolean; runtime?: Runtime; host?: string } = {}): Promise<ListeningApp> {
  const runtime = settings.runtime ?? service.runtime;
  const app = entryApp({
    logger: runtime.logger,
    runtime,
    tenant: true,
    proxy: settings.proxy ?? false,
    steps: [
      rateLimit(runtime, options),
      (ctx) => {
        ctx.body = { ip: ctx.ip };
      },
    ],
  });
  if (settings.host === undefined) {
    const listening = await listenApp(app);
    t.teardown(listening.close);
    return listening;
  }
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, settings.host, resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: async () => {} };
}

async function statusFrom(app: ListeningApp, forwardedFor: string): Promise<number> {
  const response = await fetch(app.url, { headers: { 'x-forwarded-for': forwardedFor } });
  await response.arrayBuffer();
  return response.status;
}

test('two addresses of one /64 share a budget, however written; another /64 has its own', async (t) => {
  const app = await limitedApp(t, { name: uniqueName(), windowMs: 60_000, max: 2 }, { proxy: true });
  t.is(await statusFrom(app, '2001:db8:a:b::1'), 200);
  t.is(await statusFrom(app, '2001:DB8:A:B:FFFF:EEEE:DDDD:CCCC'), 200);
  t.is(await statusFrom(app, '2001:0db8:000a:000b:0000:0000:0000:0042'), 429, 'the third request of the /64, written in full');
  t.is(await statusFrom(app, '2001:db8:a:c::1'), 200, 'the next /64 is another client');
  t.is(await statusFrom(app, '2001:db8:a:b::1'), 429);
});

test('an IPv4-mapped address counts in the same budget as the IPv4 address, in every textual form', async (t) => {
  const forms = ['::ffff:203.0.113.9', '::FFFF:203.0.113.9', '0:0:0:0:0:ffff:203.0.113.9', '0000:0000:0000:0000:0000:FFFF:CB00:7109', '::ffff:cb00:7109'];
  for (const form of forms) {
    const app = await limitedApp(t, { name: uniqueName(), windowMs: 60_000, max: 1 }, { proxy: true });
    t.is(await statusFrom(app, '203.0.113.9'), 200, form);
    t.is(await statusFrom(app, form), 429, form);
    t.is(await statusFrom(app, '203.0.113.10'), 200, 'another IPv4 address is another client');
  }
});

test('behind a proxy that writes the client port (Azure Application Gateway: 203.0.113.9:4711, [2001:db8::1]:443), each port is not a budget of its own', async (t) => {
  const app = await limitedApp(t, { name: uniqueName(), windowMs: 60_000, max: 2 }, { proxy: true });
  t.is(await statusFrom(app, '203.0.113.9:4711'), 200);
  t.is(await statusFrom(app, '203.0.113.9:4712'), 200);
  t.is(await statusFrom(app, '203.0.113.9:4713'), 429, 'the third request of one address, from a third port');
  t.is(await statusFrom(app, '203.0.113.9'), 429, 'the address written without a port');
  t.is(await statusFrom(app, '[2001:db8:a:b::1]:443'), 200);
  t.is(await statusFrom(app, '[2001:db8:a:b::2]'), 200);
  t.is(await statusFrom(app, '2001:db8:a:b::3'), 429, 'one /64, in brackets with a port or without');
});

test('a client connecting over IPv4 to a dual-stack listener (::ffff:127.0.0.1) is the same client as on an IPv4 listener', async (t) => {
  const options = { name: uniqueName(), windowMs: 60_000, max: 1 };
  const dualStack = await limitedApp(t, options, { host: '::' });
  const ipv4Only = await limitedApp(t, options, { host: '127.0.0.1' });
  const first = await fetch(dualStack.url);
  t.is(first.status, 200);
  t.deepEqual(await first.json(), { ip: '::ffff:127.0.0.1' }, 'the socket address as Node gives it, unchanged for handlers');
  t.is((await fetch(ipv4Only.url)).status, 429);
});

test('a per-route limit by IP, and by user on a request without a verified caller, group addresses the same way', async (t) => {
  for (const by of ['ip', 'user'] as const) {
    const app = await limitedApp(t, { name: 'route', scope: uniqueName(), by, windowMs: 60_000, max: 1 }, { proxy: true });
    t.is(await statusFrom(app, '2001:db8:1:2::a'), 200, by);
    t.is(await statusFrom(app, '2001:db8:1:2::b'), 429, by);
    t.is(await statusFrom(app, '::ffff:192.0.2.1'), 200, by);
    t.is(await statusFrom(app, '192.0.2.1'), 429, by);
  }
});

test('rateLimit.ipv6Prefix sets the network a client holds: with 48, the login budget spans a /48 behind a trusted proxy', async (t) => {
  const limited = await startTestService(t, { expert: { http: { trustProxy: true }, rateLimit: { ipv6Prefix: 48, login: { max: 1 } } } });
  const login = (forwardedFor: string) => limited.fetch('/auth/login', jsonPost({ username: 'nobody', password: 'wrong' }, { 'x-forwarded-for': forwardedFor }));
  t.is((await login('2001:db8:5:1::1')).status, 401);
  t.is((await login('2001:db8:5:ffff::1')).status, 429, 'another /64 of the same /48');
  t.is((await login('2001:db8:6::1')).status, 401, 'another /48');
  t.is((await login('10.0.0.1, 2001:db8:6::2')).status, 429, 'the entry the proxy appended is the one that counts');
});

test('the public budget of the sample heartbeat groups IPv6 clients by /64 by default', async (t) => {
  const sample = await startSampleService(t, { http: { trustProxy: true }, rateLimit: { public: { max: 1 } } });
  const heartbeat = async (forwardedFor: string) => {
    const response = await sample.fetch('/api/sample/heartbeat', { headers: { 'x-forwarded-for': forwardedFor } });
    await response.arrayBuffer();
    return response.status;
  };
  t.is(await heartbeat('2001:db8:7:8:1::1'), 200);
  t.is(await heartbeat('2001:db8:7:8:2::1'), 429);
  t.is(await heartbeat('2001:db8:7:9::1'), 200);
  t.is(await heartbeat('::ffff:198.51.100.7'), 200);
  t.is(await heartbeat('198.51.100.7'), 429);
});

function ipv6Of(bytes: Uint8Array): ipaddr.IPv6 {
  return new ipaddr.IPv6([...bytes]);
}

/** An IPv6 address outside ::ffff:0:0/96 (those are IPv4 clients), as 16 bytes. */
const ipv6Bytes = fc.uint8Array({ minLength: 16, maxLength: 16 }).filter((bytes) => !ipv6Of(bytes).isIPv4MappedAddress());

/** The ways one address may be written: compressed, in full, with or without leading zeros, in either case. */
function writings(bytes: Uint8Array): string[] {
  const address = ipv6Of(bytes);
  const padded = address.parts.map((part) => part.toString(16).padStart(4, '0')).join(':');
  const forms = [address.toString(), address.toNormalizedString(), padded];
  return [...forms, ...forms.map((form) => form.toUpperCase())];
}

/** `bytes` with bit `index` (from the most significant) flipped. */
function flipped(bytes: Uint8Array, index: number): Uint8Array {
  const copy = Uint8Array.from(bytes);
  copy[index >> 3] = (copy[index >> 3] as number) ^ (0x80 >> (index & 7));
  return copy;
}

test('property: addresses with the same first N bits are one client whatever their other bits and writing; a difference within the first N bits is another client', (t) => {
  fc.assert(
    fc.property(ipv6Bytes, fc.integer({ min: 32, max: 128 }), fc.nat(), fc.nat(), fc.nat(), (bytes, prefix, inside, outside, writing) => {
      const group = clientGroup(prefix);
      const key = group(writings(bytes)[writing % 6] as string);
      for (const form of writings(bytes)) if (group(form) !== key) return false;
      if (prefix < 128) {
        const sameNetwork = flipped(bytes, prefix + (outside % (128 - prefix)));
        if (!ipv6Of(sameNetwork).isIPv4MappedAddress() && group(writings(sameNetwork)[writing % 6] as string) !== key) return false;
      }
      const otherNetwork = flipped(bytes, inside % prefix);
      if (ipv6Of(otherNetwork).isIPv4MappedAddress()) return true;
      return group(writings(otherNetwork)[writing % 6] as string) !== key;
    }),
    { numRuns: 1000 },
  );
  t.pass();
});

test('an IPv4 address is its own client, a port written after an address is left out, and text that is no address counts as itself', (t) => {
  const group = clientGroup(64);
  t.is(group('203.0.113.9'), group('::ffff:203.0.113.9'));
  t.not(group('203.0.113.9'), group('203.0.113.8'));
  t.is(group('unknown'), 'unknown');
  t.is(group(''), '');
  t.is(group('203.0.113.9:4711'), '203.0.113.9', 'a port is not part of the client');
  t.is(group('[2001:db8::1]:443'), group('2001:db8::2'));
  t.is(group('[::ffff:203.0.113.9]'), '203.0.113.9');
  t.is(group('203.0.113.9:http'), '203.0.113.9:http');
});
