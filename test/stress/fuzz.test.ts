import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import fc from 'fast-check';
import { signSystemToken } from '../../lib/auth/tokens.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { answerProblems, isHandlerFailure, pollutionProblems } from '../helpers/answer-checks.ts';
import { snapshotPrototypes, type PrototypeSnapshot } from '../helpers/prototypes.ts';
import { forgedTokens } from '../helpers/forged-tokens.ts';
import { describeRequest, fuzzRequest, requestBytes, type FuzzRequest, type FuzzTargets } from '../helpers/fuzz-requests.ts';
import { rawExchange, type RawOutcome } from '../helpers/raw-http.ts';
import { createAccount, startSampleService, storedPasswordHash } from '../helpers/sample.ts';
import { dropTestDatabase, TEST_JWT_SECRET, type ServiceUnderTest } from '../helpers/service.ts';
import { startSsoStandIn, type SsoStandIn } from '../../projects/sample/test/sso-stand-in.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * A property-based HTTP fuzzer over every system endpoint and the sample's routes, the service
 * running in this process (so that a polluted prototype would show here). For every request:
 * an answer within 5 s, no 5xx but a sample handler's own explained failure (the database is
 * up), `X-Request-Id` on every answer, a JSON `{error}` body on every error, no stack trace and
 * no secret; after every batch, no prototype polluted and the service still answering.
 * FUZZ_SEED=<n> replays a run; every problem found is counted by kind, with one example.
 */

const BATCH = 8;
const RUNS = Number(process.env.FUZZ_RUNS ?? 700);
const JWT_RUNS = 60;
const ANSWER_LIMIT_MS = 5000;
const RUN_LIMIT_MS = 120_000;
const PASSWORDS = { alice: 'alice-password-1', bob: 'bob-password-2' };
const API_KEY = 'sample-api-key-of-some-length';

let service: ServiceUnderTest;
let sso: SsoStandIn;
let targets: FuzzTargets;
let secrets: string[];
let uploadRoot: string;

test.before(async () => {
  sso = await startSsoStandIn();
  uploadRoot = scratchFolder('fuzz');
  service = await startSampleService(undefined, {
    spaces: { enabled: true },
    rateLimit: { public: { windowMs: 60_000, max: 10_000_000 }, login: { windowMs: 60_000, max: 10_000_000 } },
    sso: { authUrl: sso.url, timeoutMs: 1000 },
    sample: { apiKey: API_KEY, uploadDir: path.join(uploadRoot, 'uploads') },
  });
  await createTenant(service.runtime.knex, 'acme');
  const alice = await createAccount(service, 'default', { username: 'alice', password: PASSWORDS.alice, role: 'admin' });
  const bob = await createAccount(service, 'acme', { username: 'bob', password: PASSWORDS.bob });
  const valid = await signSystemToken(service.runtime, alice, 'default');
  const created = await service.fetch('/spaces', {
    method: 'POST',
    headers: { authorization: `Bearer ${valid}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Payroll', schemas: ['hr'] }),
  });
  if (created.status !== 201) throw new Error(`could not create the space: ${created.status}`);
  targets = {
    tokens: { valid, 'valid in acme': await signSystemToken(service.runtime, bob, 'acme'), ...forgedTokens(TEST_JWT_SECRET, alice.uid, 'default', 'acme') },
    password: PASSWORDS.alice,
    apiKey: API_KEY,
  };
  const hashes = [await storedPasswordHash(service, 'default', 'alice'), await storedPasswordHash(service, 'acme', 'bob')];
  secrets = [TEST_JWT_SECRET, API_KEY, ...Object.values(PASSWORDS), ...hashes, ...hashes.map((hash) => hash.split('$').pop() ?? hash)];
});

test.after.always(async () => {
  await service?.close();
  await sso?.close();
  await dropTestDatabase();
});

/** Problems by kind: how often, and the first request that showed it. */
class Findings {
  readonly #byKind = new Map<string, { count: number; example: string }>();
  readonly statuses = new Map<number, number>();
  requests = 0;

  add(kind: string, request: FuzzRequest | undefined, detail = ''): void {
    const known = this.#byKind.get(kind);
    if (known) known.count++;
    else this.#byKind.set(kind, { count: 1, example: `${request ? describeRequest(request) : ''} ${detail}`.trim() });
  }

  summary(): string[] {
    return [...this.#byKind].map(([kind, { count, example }]) => `${kind} (${count}×), e.g. ${example}`);
  }
}

async function exchange(request: FuzzRequest) {
  const port = Number(new URL(service.url).port);
  return rawExchange(port, requestBytes(request), { timeoutMs: ANSWER_LIMIT_MS, firstIsHead: request.method === 'HEAD' });
}

async function checkBatch(batch: readonly FuzzRequest[], findings: Findings, baseline: PrototypeSnapshot): Promise<void> {
  const outcomes = await Promise.all(batch.map(exchange));
  findings.requests += batch.length;
  for (const [index, outcome] of outcomes.entries()) {
    const request = batch[index] as FuzzRequest;
    const received = outcome.received.subarray(0, 300).toString('latin1');
    for (const answer of outcome.answers) findings.statuses.set(answer.status, (findings.statuses.get(answer.status) ?? 0) + 1);
    for (const problem of await problemsOf(request, outcome)) findings.add(problem, request, `answered: ${received}`);
  }
  for (const problem of pollutionProblems(baseline)) findings.add(problem, batch[0]);
}

/**
 * The answer's problems. A HEAD answer has no body to tell a handler's explained 500 from a
 * crash, so a 500 to HEAD is asked again as GET, whose body tells.
 */
async function problemsOf(request: FuzzRequest, outcome: RawOutcome): Promise<string[]> {
  const problems = answerProblems(outcome, { head: request.method === 'HEAD', secrets });
  if (request.method !== 'HEAD' || !problems.includes('status 500')) return problems;
  const replayed = (await exchange({ ...request, method: 'GET' })).answers[0];
  return replayed !== undefined && isHandlerFailure(replayed) ? problems.filter((problem) => problem !== 'status 500') : problems;
}

function seedOption(): { seed?: number } {
  return process.env.FUZZ_SEED ? { seed: Number(process.env.FUZZ_SEED) } : {};
}

test.serial('at least 5 000 fuzzed requests: every one answered in time, no undocumented 5xx, no stack, no secret, no prototype polluted', async (t) => {
  const findings = new Findings();
  const baseline = snapshotPrototypes();
  const started = performance.now();
  const details = await fc.check(
    fc.asyncProperty(fc.array(fuzzRequest(targets), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
      await checkBatch(batch, findings, baseline);
      return true;
    }),
    { numRuns: RUNS, ...seedOption(), plugins: [fc.interruptAfterTimeLimit(RUN_LIMIT_MS)] },
  );
  t.log(`${findings.requests} requests in ${Math.round((performance.now() - started) / 1000)} s, seed ${details.seed}`);
  t.log(`answers by status: ${[...findings.statuses].sort(([left], [right]) => left - right).map(([status, count]) => `${status}×${count}`).join(' ')}`);
  t.true(findings.requests >= 5000, `only ${findings.requests} requests within ${RUN_LIMIT_MS / 1000} s`);
  t.deepEqual(findings.summary(), []);
  t.deepEqual(filesOutside(uploadRoot, 'uploads'), [], 'uploads stay in the upload folder');
  t.deepEqual(secrets.filter((secret) => service.logText().includes(secret)), [], 'no secret in the log');
  const health = await service.fetch('/healthz');
  t.is(health.status, 200, 'the service still answers');
});

test.serial('every forged JWT is refused with 401 and a Bearer challenge, on every route that takes one', async (t) => {
  const forged = Object.keys(targets.tokens).filter((kind) => !kind.startsWith('valid'));
  const routes = ['GET /spaces', 'GET /spaces/Payroll', 'POST /spaces', 'PUT /spaces/Payroll', 'DELETE /spaces/Payroll', 'POST /api/sample/upload', 'POST /api/project/upload'];
  const refusals = new Findings();
  let sent = 0;
  const request = fc.record({ kind: fc.constantFrom(...forged), route: fc.constantFrom(...routes), scheme: fc.constantFrom('Bearer', 'bearer', 'BEARER') });
  await fc.check(
    fc.asyncProperty(fc.array(request, { minLength: BATCH, maxLength: BATCH }), async (batch) => {
      await Promise.all(
        batch.map(async ({ kind, route, scheme }) => {
          const [method = 'GET', pathname = '/'] = route.split(' ');
          const response = await service.fetch(pathname, {
            method,
            headers: { authorization: `${scheme} ${targets.tokens[kind]}`, 'content-type': 'application/json' },
            body: method === 'GET' || method === 'DELETE' ? undefined : '{"name":"Forged","schemas":[]}',
            signal: AbortSignal.timeout(ANSWER_LIMIT_MS),
          });
          sent++;
          const body = await response.text();
          if (response.status !== 401 || response.headers.get('www-authenticate') !== 'Bearer') refusals.add(kind, undefined, `${route} → ${response.status} ${body.slice(0, 100)}`);
        }),
      );
      return true;
    }),
    { numRuns: JWT_RUNS, ...seedOption() },
  );
  t.log(`${sent} requests with ${forged.length} kinds of forged token`);
  t.deepEqual(refusals.summary(), []);
});

/** Paths under `root` other than the folder `kept` and what it holds: files written where they should not be. */
function filesOutside(root: string, kept: string): string[] {
  const strays = readdirSync(root).filter((name) => name !== kept);
  const keptFolder = path.join(root, kept);
  const nested = existsSync(keptFolder) ? readdirSync(keptFolder, { withFileTypes: true }).filter((entry) => !entry.isFile()) : [];
  return [...strays, ...nested.map((entry) => path.join(kept, entry.name))];
}
