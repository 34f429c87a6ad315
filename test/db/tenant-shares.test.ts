import test from 'ava';
import { type ShareRelease, TenantShareBusy, TenantShares } from '../../lib/db/tenant-shares.ts';

// The queue behind `limits.tenantConnections` (SPEC §17.2), without a database: each tenant's
// own, first come first served, bounded by `limits.queueMs`.

async function taken(shares: TenantShares, tenant: string): Promise<ShareRelease> {
  return shares.take(tenant);
}

test('a tenant takes up to its share at once; the next waits for one of them, first come first served, while other tenants take theirs', async (t) => {
  const waits: string[] = [];
  const shares = new TenantShares({ perTenant: 2, queueMs: 5000, onWait: (shareClass, outcome) => waits.push(`${shareClass} ${outcome}`) });
  const first = await taken(shares, 'acme');
  await taken(shares, 'acme');
  t.is(typeof shares.take('globex'), 'function', 'another tenant is served at once, without a promise');
  const order: string[] = [];
  const inOrder = (name: string) => (release: ShareRelease) => {
    order.push(name);
    return release;
  };
  const third = taken(shares, 'acme').then(inOrder('third'));
  const fourth = taken(shares, 'acme').then(inOrder('fourth'));
  t.deepEqual(shares.counts(), { tenantsAtShare: 1, shareWaiting: 2 });
  first();
  first();
  await third;
  t.deepEqual(shares.counts(), { tenantsAtShare: 1, shareWaiting: 1 }, 'a release given twice frees one connection only');
  (await third)();
  await fourth;
  t.deepEqual(order, ['third', 'fourth'], 'the queue keeps its order');
  t.deepEqual(waits, ['tenant granted', 'tenant granted']);
});

test('a statement still waiting after queueMs is refused with the limits named, for that tenant alone', async (t) => {
  const waits: string[] = [];
  const shares = new TenantShares({ perTenant: 1, queueMs: 100, onWait: (shareClass, outcome) => waits.push(`${shareClass} ${outcome}`) });
  const held = await taken(shares, 'acme');
  const error = await t.throwsAsync(taken(shares, 'acme'), { instanceOf: TenantShareBusy });
  t.is(error?.message, 'too many database statements of this tenant at once: its 1 connections (limits.tenantConnections) stayed busy for 100 ms (limits.queueMs)');
  t.like(error, { status: 503, expose: true });
  t.is(typeof shares.take('globex'), 'function');
  held();
  t.is(typeof shares.take('acme'), 'function', 'the refused wait left no place in the queue behind it');
  t.deepEqual(waits, ['tenant refused']);
});

test('statements for no tenant count as the service’s class, not as a tenant at its share', async (t) => {
  const waits: string[] = [];
  const shares = new TenantShares({ perTenant: 1, queueMs: 1000, onWait: (shareClass, outcome) => waits.push(`${shareClass} ${outcome}`) });
  const held = await taken(shares, '');
  const next = taken(shares, '');
  t.deepEqual(shares.counts(), { tenantsAtShare: 0, shareWaiting: 1 }, 'the service is not a tenant at its share');
  held();
  (await next)();
  t.deepEqual(waits, ['service granted']);
});

test('a share must be a whole number of connections, at least 1', (t) => {
  for (const perTenant of [0, -1, 1.5, Number.NaN]) t.throws(() => new TenantShares({ perTenant, queueMs: 100 }), { instanceOf: RangeError });
});

test('refuseWaiting refuses every waiting statement of one tenant with the error given; other tenants wait on, and shares held are kept', async (t) => {
  const waits: string[] = [];
  const shares = new TenantShares({ perTenant: 1, queueMs: 10_000, onWait: (shareClass, outcome) => waits.push(`${shareClass} ${outcome}`) });
  const held = [await taken(shares, 'acme'), await taken(shares, 'globex')];
  const acmeWaiting = [taken(shares, 'acme'), taken(shares, 'acme')];
  const globexWaiting = taken(shares, 'globex');
  const stopped = new Error('the database stopped answering');
  shares.refuseWaiting('acme', stopped);
  for (const refused of acmeWaiting) t.is(await t.throwsAsync(refused), stopped);
  t.deepEqual(shares.counts(), { tenantsAtShare: 2, shareWaiting: 1 }, 'globex still waits');
  t.deepEqual(waits, ['tenant refused', 'tenant refused']);
  held[1]();
  (await globexWaiting)();
  held[0]();
  t.is(typeof shares.take('acme'), 'function', 'the refused waits left no place in the queue');
  shares.refuseWaiting('nobody', stopped);
});
