import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import autocannon from 'autocannon';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { withTenantDatabase } from '../helpers/database.ts';
import { dropTestDatabase, testDatabaseUrl } from '../helpers/service.ts';
import { startServiceProcess } from '../helpers/service-process.ts';

/**
 * 20 000 mixed requests at 100 keep-alive connections against the service in its own process,
 * after 30 000 quick ones to warm it up: every answer is the one expected, and the resident memory grows by
 * less than 5 % over the second half of the measured run, where a leak would show. (Without the
 * warm-up, RSS still grows ~25 % there with no leak: V8 keeps enlarging its heap until its first
 * full collections, which come only after some 40 000 requests; the live heap stays ~30 MB.)
 */

const TOTAL = 20_000;
/** V8 sizes its heap to the traffic over the first tens of thousands of requests: only then is growth a leak. */
const WARM_UP = 30_000;
const CONNECTIONS = 100;
const RUN_LIMIT_MS = 100_000;
const RSS_GROWTH_LIMIT = 0.05;
const PASSWORD = 'alice-password-1';
const BOUNDARY = 'spaceport-load-boundary';

/** autocannon's per-request hooks (its bundled types leave them out). */
interface CheckedRequest extends autocannon.Request {
  /** Called before each sending, with the connection's context; returns what to send. */
  setupRequest?(request: autocannon.Request, context: Record<string, unknown>): autocannon.Request;
  /** Called with every answer, and the same context. */
  onResponse(status: number, body: string, context: Record<string, unknown>): void;
}

interface Kind {
  label: string;
  /** How many of every 200 requests are of this kind. */
  share: number;
  request: autocannon.Request;
  expectedStatus: number;
}

test.after.always(dropTestDatabase);

test('20 000 mixed requests at 100 connections: 0 errors, resident memory up less than 5 % over the second half', async (t) => {
  const databaseUrl = await testDatabaseUrl();
  const service = await startServiceProcess(t, {
    databaseUrl,
    expert: {
      spaces: { enabled: true },
      rateLimit: { public: { windowMs: 60_000, max: 10_000_000 }, login: { windowMs: 60_000, max: 10_000_000 } },
      sample: { uploadDir: mkdtempSync(path.join(tmpdir(), 'spaceport-load-uploads-')) },
    },
  });
  await withTenantDatabase(databaseUrl, (database) => saveAccount(database, 'default', { username: 'alice', password: PASSWORD, role: 'admin' }));
  const token = await logIn(service.url);
  const created = await fetch(`${service.url}/spaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Payroll', schemas: ['hr'] }),
  });
  t.is(created.status, 201);

  const wrongAnswers: string[] = [];
  const kinds = mixedKinds(token);
  const heartbeat = checked(kinds.filter((kind) => kind.label === 'GET heartbeat'), wrongAnswers);
  const warmUp = await drive(service.url, [heartbeat], WARM_UP, () => {});
  const rssAfterWarmUp = service.rssKilobytes();
  let rssAtHalf = 0;
  const measured = await drive(service.url, [checked(interleave(kinds), wrongAnswers)], TOTAL, () => {
    rssAtHalf = service.rssKilobytes();
  });
  const rssAtEnd = service.rssKilobytes();

  const growth = (rssAtEnd - rssAtHalf) / rssAtHalf;
  const { latency, requests: sent, duration } = measured;
  t.log(`warm-up: ${warmUp.requests.total} requests in ${warmUp.duration} s`);
  t.log(`measured: ${sent.total} requests in ${duration} s (${Math.round(sent.total / duration)}/s), p99 ${latency.p99} ms, max ${latency.max} ms`);
  t.log(`RSS ${rssAfterWarmUp} kB after the warm-up, ${rssAtHalf} kB at half, ${rssAtEnd} kB at the end: ${(growth * 100).toFixed(2)} % over the second half`);
  for (const [name, result, amount] of [['warm-up', warmUp, WARM_UP], ['measured run', measured, TOTAL]] as const) {
    t.is(result.requests.total, amount, `${name}: all ${amount} answered within ${RUN_LIMIT_MS / 1000} s`);
    t.is(result.errors, 0, `${name}: no connection errors`);
    t.is(result.timeouts, 0, `${name}: no timeouts`);
  }
  t.deepEqual(wrongAnswers.slice(0, 10), [], `${wrongAnswers.length} answers other than expected`);
  t.true(rssAtHalf > 0, 'RSS measured at half-way');
  t.true(growth < RSS_GROWTH_LIMIT, `RSS grew ${(growth * 100).toFixed(2)} % over the second half`);
  t.true(service.running());
});

/** Sends `amount` requests at CONNECTIONS connections; `atHalf` runs once half of them are answered. */
async function drive(url: string, requests: CheckedRequest[], amount: number, atHalf: () => void): Promise<autocannon.Result> {
  const run = autocannon({ url, connections: CONNECTIONS, amount, timeout: 10, sampleInt: 100, requests });
  let answered = 0;
  run.on('response', () => {
    answered++;
    if (answered === amount / 2) atHalf();
  });
  const limit = setTimeout(() => run.stop(), RUN_LIMIT_MS);
  const result = await run;
  clearTimeout(limit);
  return result;
}

async function logIn(url: string): Promise<string> {
  const response = await fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'alice', password: PASSWORD }),
  });
  const body = (await response.json()) as { token?: string };
  if (typeof body.token !== 'string') throw new Error(`login failed: ${response.status} ${JSON.stringify(body)}`);
  return body.token;
}

/** The traffic mix: public routes, a JWT project route, system routes, logins and 404s. */
function mixedKinds(token: string): Kind[] {
  const bearer = { authorization: `Bearer ${token}` };
  const json = { 'content-type': 'application/json' };
  const upload = [`--${BOUNDARY}`, 'Content-Disposition: form-data; name="file"; filename="load.txt"', 'Content-Type: text/plain', '', 'hello', `--${BOUNDARY}--`, ''].join('\r\n');
  return [
    { label: 'GET heartbeat', share: 63, expectedStatus: 200, request: { method: 'GET', path: '/api/sample/heartbeat' } },
    { label: 'POST getOneAccount', share: 40, expectedStatus: 200, request: { method: 'POST', path: '/api/sample/getOneAccount', headers: json, body: '{"EMPLOYEE_ID":"alice"}' } },
    { label: 'GET /spaces', share: 30, expectedStatus: 200, request: { method: 'GET', path: '/spaces', headers: bearer } },
    { label: 'GET /spaces/Payroll', share: 10, expectedStatus: 200, request: { method: 'GET', path: '/spaces/Payroll', headers: bearer } },
    {
      label: 'POST upload (JWT)',
      share: 16,
      expectedStatus: 200,
      request: { method: 'POST', path: '/api/sample/upload', headers: { ...bearer, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, body: upload },
    },
    { label: 'GET unknown path', share: 20, expectedStatus: 404, request: { method: 'GET', path: '/nowhere' } },
    { label: 'POST unknown project route', share: 20, expectedStatus: 404, request: { method: 'POST', path: '/api/sample/nope', headers: json, body: '{}' } },
    { label: 'POST /auth/login', share: 1, expectedStatus: 200, request: { method: 'POST', path: '/auth/login', headers: json, body: JSON.stringify({ username: 'alice', password: PASSWORD }) } },
  ];
}

/**
 * One request that, each time a connection sends it, is the next of `sequence` across all
 * connections, and checks its answer. (Were every connection to walk the sequence itself, all
 * 100 would start in step and send, say, their logins at the same moment.)
 */
function checked(sequence: readonly Kind[], wrongAnswers: string[]): CheckedRequest {
  let sent = 0;
  return {
    setupRequest: (request, context) => {
      const kind = sequence[sent++ % sequence.length] as Kind;
      context.kind = kind;
      return { ...request, ...kind.request, headers: kind.request.headers ?? {}, body: kind.request.body ?? '' };
    },
    onResponse: (status, body, context) => {
      const kind = context.kind as Kind;
      if (status !== kind.expectedStatus) wrongAnswers.push(`${kind.label}: ${status} ${body.slice(0, 200)}`);
    },
  };
}

/** Every kind `share` times, spread evenly over the sequence. */
function interleave(kinds: Kind[]): Kind[] {
  const placed = kinds.flatMap((kind) => Array.from({ length: kind.share }, (_, index) => ({ kind, position: (index + 0.5) / kind.share })));
  return placed.sort((left, right) => left.position - right.position).map((entry) => entry.kind);
}
