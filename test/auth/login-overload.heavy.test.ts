import test from 'ava';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { jsonPost } from '../helpers/http.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

/** More logins at once than the hashing queue holds (concurrent hashes plus queued ones). */
const BURST = 120;

let service: ServiceUnderTest;
serviceForFile({ expert: { rateLimit: { login: { windowMs: 60_000, max: 10_000 } } } }, async (started) => {
  service = started;
  await saveAccount(service.runtime.tenantDatabase, 'default', { username: 'alice', password: 'pw-alice' });
});

interface LoginAnswer {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

async function login(index: number): Promise<LoginAnswer> {
  const response = await service.fetch('/auth/login', jsonPost({ username: 'alice', password: index % 2 ? 'pw-alice' : 'wrong' }));
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Record<string, unknown> };
}

/** GET /healthz one after another until `done` settles; the time each took. */
async function healthTimesUntil(done: Promise<unknown>): Promise<number[]> {
  let finished = false;
  void done.finally(() => {
    finished = true;
  });
  const times: number[] = [];
  while (!finished) {
    const started = performance.now();
    const response = await service.fetch('/healthz');
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`healthz answered ${response.status}`);
    times.push(performance.now() - started);
  }
  return times;
}

function percentile(values: number[], rank: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((rank / 100) * sorted.length))] ?? 0;
}

test.serial('a login burst beyond the hashing queue gets 503 with Retry-After while other requests keep answering fast', async (t) => {
  const burst = Promise.all(Array.from({ length: BURST }, (_, index) => login(index)));
  const [answers, healthTimes] = await Promise.all([burst, healthTimesUntil(burst)]);

  const busy = answers.filter((answer) => answer.status === 503);
  const checked = answers.filter((answer) => answer.status === 200 || answer.status === 401);
  t.log(`${checked.length} logins checked, ${busy.length} refused as busy; healthz p99 ${percentile(healthTimes, 99).toFixed(0)} ms over ${healthTimes.length}`);
  t.is(busy.length + checked.length, BURST, 'every login is answered 200, 401 or 503');
  t.true(busy.length > 0, 'logins beyond the queue are refused at once');
  t.true(checked.length > 0, 'the queue still serves logins');
  for (const answer of busy) {
    t.is(answer.retryAfter, '1');
    t.deepEqual(Object.keys(answer.body), ['error']);
  }
  t.true(healthTimes.length > 0);
  t.true(percentile(healthTimes, 99) < 1000, `healthz p99 ${percentile(healthTimes, 99).toFixed(0)} ms during the burst`);
});

test.serial('once the burst is over, logins are checked again', async (t) => {
  const answer = await login(1);
  t.is(answer.status, 200);
});
