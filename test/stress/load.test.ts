import test, { type ExecutionContext } from 'ava';
import autocannon from 'autocannon';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { withTenantDatabase } from '../helpers/database.ts';
import { dropTestDatabase, testDatabaseUrl } from '../helpers/service.ts';
import { startServiceProcess } from '../helpers/service-process.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * Mixed requests at 100 keep-alive connections against the service in its own process, 10 000 at
 * a time, after 30 000 quick ones to warm it up: every answer is the one expected, and the resident
 * memory settles: within 80 000 mixed requests, some 20 000 in a row grow it by less than 3 %.
 * A 700-byte string kept from every request failed it in two tries of three (RSS up 3.2 to 12 % over
 * every 20 000); in the third, the RSS fell back once and the leak passed. So it is sure of leaks
 * of a kilobyte or more a request (5 % and more per 20 000), not of smaller ones.
 * It does not settle at once: glibc's and V8's heaps grow with the mix over its first 40 000 to
 * 60 000 requests, while the live heap stays at 45-70 MB. (Without the V8 flag `make run` gives,
 * which test/helpers/main-process.ts gives too, they grew for 80 000, and by 9.65 % over the 10 000
 * after the first 10 000 on a quick machine.)
 */

const ROUND = 10_000;
const MOST_ROUNDS = 8;
/** V8 sizes its heap to the traffic over its first tens of thousands of requests. */
const WARM_UP = 30_000;
const CONNECTIONS = 100;
const RUN_LIMIT_MS = 100_000;
const RSS_GROWTH_LIMIT = 0.03;
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

test('mixed requests at 100 connections: 0 errors, and resident memory settles (under 3 % over 20 000 requests) within 80 000', async (t) => {
  const databaseUrl = await testDatabaseUrl();
  const service = await startServiceProcess(t, {
    databaseUrl,
    expert: {
      spaces: { enabled: true },
      rateLimit: { public: { windowMs: 60_000, max: 10_000_000 }, login: { windowMs: 60_000, max: 10_000_000 } },
      sample: { uploadDir: scratchFolder('load-uploads') },
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
  const warmUp = await drive(service.url, [heartbeat], WARM_UP);
  t.log(`warm-up: ${warmUp.requests.total} requests in ${warmUp.duration} s, RSS ${service.rssKilobytes()} kB`);
  checkAllAnswered(t, 'warm-up', warmUp, WARM_UP);
  const mix = interleave(kinds);
  const rss = [service.rssKilobytes()];
  for (let round = 1; round <= MOST_ROUNDS && !(lastTwoRoundsGrowth(rss) < RSS_GROWTH_LIMIT); round++) {
    const result = await drive(service.url, [checked(mix, wrongAnswers)], ROUND);
    rss.push(service.rssKilobytes());
    const { latency, requests: sent, duration } = result;
    t.log(`round ${round}: ${sent.total} requests in ${duration} s (${Math.round(sent.total / duration)}/s), p99 ${latency.p99} ms, max ${latency.max} ms; RSS ${rss.at(-1)} kB`);
    checkAllAnswered(t, `round ${round}`, result, ROUND);
  }
  const growth = lastTwoRoundsGrowth(rss);
  t.deepEqual(wrongAnswers.slice(0, 10), [], `${wrongAnswers.length} answers other than expected`);
  t.true(growth < RSS_GROWTH_LIMIT, `RSS still grew ${(growth * 100).toFixed(2)} % over the last 20 000 of ${(rss.length - 1) * ROUND} mixed requests: ${rss.join(', ')} kB`);
  t.true(service.running());
});

/** Sends `amount` requests at CONNECTIONS connections. */
async function drive(url: string, requests: CheckedRequest[], amount: number): Promise<autocannon.Result> {
  const run = autocannon({ url, connections: CONNECTIONS, amount, timeout: 10, sampleInt: 100, requests });
  const limit = setTimeout(() => run.stop(), RUN_LIMIT_MS);
  const result = await run;
  clearTimeout(limit);
  return result;
}

/** How much the RSS grew over the last two rounds (NaN before there are two). */
function lastTwoRoundsGrowth(rss: readonly number[]): number {
  const [before, , after] = rss.slice(-3);
  return before === undefined || after === undefined ? Number.NaN : (after - before) / before;
}

function checkAllAnswered(t: ExecutionContext, name: string, result: autocannon.Result, amount: number): void {
  t.is(result.requests.total, amount, `${name}: all ${amount} answered within ${RUN_LIMIT_MS / 1000} s`);
  t.is(result.errors, 0, `${name}: no connection errors`);
  t.is(result.timeouts, 0, `${name}: no timeouts`);
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
