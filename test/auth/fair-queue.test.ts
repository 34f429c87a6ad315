import test from 'ava';
import { FairQueue } from '../../lib/auth/fair-queue.ts';

/** A queue of one job at a time whose jobs finish when the test says, recording the order they start in. */
function queueOf(capacity: number) {
  const started: string[] = [];
  const finishers: Array<() => void> = [];
  const queue = new FairQueue({ concurrency: 1, capacity, refusal: () => new Error('busy') });
  const job = (label: string) => () =>
    new Promise<string>((resolve) => {
      started.push(label);
      finishers.push(() => resolve(label));
    });
  const finishAll = async () => {
    while (finishers.length > 0) {
      (finishers.shift() as () => void)();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { queue, job, started, finishAll };
}

test('the keys with jobs waiting take turns, one job each', async (t) => {
  const { queue, job, started, finishAll } = queueOf(10);
  const runs = ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'].map((label) => queue.run([label.slice(0, 1)], job(label)));
  await new Promise((resolve) => setImmediate(resolve));
  await finishAll();
  t.deepEqual(await Promise.all(runs), ['a1', 'a2', 'a3', 'b1', 'b2', 'c1']);
  t.deepEqual(started, ['a1', 'a2', 'b1', 'c1', 'a3', 'b2']);
});

test('a full queue refuses the newest job of the key waiting with the most, never the newcomer of a key with fewer', async (t) => {
  const { queue, job, finishAll } = queueOf(4);
  const running = queue.run(['a'], job('a0'));
  await new Promise((resolve) => setImmediate(resolve));
  const waiting = ['a1', 'a2', 'a3', 'a4'].map((label) => queue.run(['a'], job(label)));
  t.throws(() => queue.assertRoomFor(['a']), { message: 'busy' });
  t.notThrows(() => queue.assertRoomFor(['b']));
  const b1 = queue.run(['b'], job('b1'));
  await t.throwsAsync(waiting[3] as Promise<string>, { message: 'busy' });
  const b2 = queue.run(['b'], job('b2'));
  await t.throwsAsync(waiting[2] as Promise<string>, { message: 'busy' });
  // Two each now: b waits with no fewer than a, so a third b is refused itself.
  await t.throwsAsync(queue.run(['b'], job('b3')), { message: 'busy' });
  await finishAll();
  t.deepEqual(await Promise.all([running, waiting[0], waiting[1], b1, b2]), ['a0', 'a1', 'a2', 'b1', 'b2']);
});

test('a job that throws rejects its own run and the queue goes on', async (t) => {
  const queue = new FairQueue({ concurrency: 1, capacity: 4, refusal: () => new Error('busy') });
  const failing = queue.run(['a'], () => {
    throw new Error('boom');
  });
  const next = queue.run(['a'], async () => 'next');
  await t.throwsAsync(failing, { message: 'boom' });
  t.is(await next, 'next');
});

test('a key of the second way crowds too: one client over many tenants makes room for another client', async (t) => {
  const { queue, job, finishAll } = queueOf(4);
  const running = queue.run(['t0', 'mallory'], job('m0'));
  await new Promise((resolve) => setImmediate(resolve));
  // One job for each of four tenants, all from one client: no tenant crowds, the client does.
  const waiting = ['t1', 't2', 't3', 't4'].map((tenant) => queue.run([tenant, 'mallory'], job(`m-${tenant}`)));
  t.throws(() => queue.assertRoomFor(['t5', 'mallory']), { message: 'busy' });
  const alice = queue.run(['t9', 'alice'], job('alice'));
  await t.throwsAsync(waiting[3] as Promise<string>, { message: 'busy' });
  await finishAll();
  t.deepEqual(await Promise.all([running, waiting[0], waiting[1], waiting[2], alice]), ['m0', 'm-t1', 'm-t2', 'm-t3', 'alice']);
});
