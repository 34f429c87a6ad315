import test from 'ava';
import { saveAccount } from '../../lib/auth/accounts.ts';
import { jsonPost } from '../helpers/http.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

/**
 * More logins at once than the hashing queue holds, from one tenant: each from an address of its own (behind a
 * trusted proxy), so each is within `rateLimit.login`, as from a botnet or the subscribers of an IPv6 /56.
 */
const BURST = 120;

let service: ServiceUnderTest;
/** Tenants one address spreads its logins over, each within its budget of 20 a minute (as any tenant's name will do). */
const SPREAD = Array.from({ length: 24 }, (_, index) => `spread-${index}`);

serviceForFile({ expert: { http: { trustProxy: true } }, tenants: ['noisy', 'quiet', ...SPREAD] }, async (started) => {
  service = started;
  await saveAccount(service.runtime.tenantDatabase, 'noisy', { username: 'mallory', password: 'pw-mallory' });
  await saveAccount(service.runtime.tenantDatabase, 'quiet', { username: 'alice', password: 'pw-alice' });
});

interface LoginAnswer {
  status: number;
  at: number;
}

async function login(tenant: string, username: string, password: string, address: string): Promise<LoginAnswer> {
  const response = await service.fetch('/auth/login', jsonPost({ username, password }, { tenant, 'x-forwarded-for': address }));
  await response.arrayBuffer();
  return { status: response.status, at: performance.now() };
}

test.serial('a login burst of one tenant leaves another tenant its logins, served in turn', async (t) => {
  let firstRefusal: () => void = () => {};
  const refused = new Promise<void>((resolve) => {
    firstRefusal = resolve;
  });
  const burst = Promise.all(
    Array.from({ length: BURST }, async (_, index) => {
      const answer = await login('noisy', 'mallory', index % 2 ? 'pw-mallory' : 'wrong', `198.51.100.${index}`);
      if (answer.status === 503) firstRefusal();
      return answer;
    }),
  );
  // A 503 to the noisy tenant: the hashing queue is full of its logins.
  await refused;
  const quiet = await Promise.all([login('quiet', 'alice', 'pw-alice', '203.0.113.1'), login('quiet', 'alice', 'wrong', '203.0.113.2')]);
  const noisy = await burst;

  t.deepEqual(
    quiet.map((answer) => answer.status),
    [200, 401],
    'the quiet tenant’s logins are checked, not refused as busy',
  );
  const lastNoisy = Math.max(...noisy.map((answer) => answer.at));
  t.true(
    quiet.every((answer) => answer.at < lastNoisy),
    'they take their turn before the noisy tenant’s queue has drained',
  );
  t.true(
    noisy.some((answer) => answer.status === 503),
    'the noisy tenant is still refused beyond its share',
  );
});

test.serial('one address’s logins spread over many tenants leave another address its login', async (t) => {
  let firstRefusal: () => void = () => {};
  const refused = new Promise<void>((resolve) => {
    firstRefusal = resolve;
  });
  // Five for each tenant: 120 from one address, each tenant's budget for it not spent (an unknown name costs a hash too).
  const burst = Promise.all(
    Array.from({ length: SPREAD.length * 5 }, async (_, index) => {
      const answer = await login(SPREAD[index % SPREAD.length] as string, 'nobody', 'guess', '198.51.100.77');
      if (answer.status === 503) firstRefusal();
      return answer;
    }),
  );
  await refused;
  const quiet = await login('quiet', 'alice', 'pw-alice', '203.0.113.5');
  const spread = await burst;
  t.is(quiet.status, 200, 'the other address’s login is checked, not refused as busy');
  t.true(
    spread.some((answer) => answer.status === 503),
    'the spreading address is still refused beyond its share',
  );
  t.true(spread.every((answer) => answer.status === 401 || answer.status === 503));
});
