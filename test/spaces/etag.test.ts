import test from 'ava';
import fc from 'fast-check';
import { call, callerWith, type Caller, type CallResult } from '../helpers/spaces.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;
let admin: Caller;
let other: Caller;
let member: Caller;

// Writers race on one row: at load 39 on 2 cores a write waited more than the service's 1.5 s and answered 503.
serviceForFile({ expert: { spaces: { enabled: true } }, queryTimeoutMs: 10_000 }, async (started) => {
  service = started;
  admin = await callerWith(service, 'default', { username: 'root', role: 'admin' });
  other = await callerWith(service, 'default', { username: 'ada', role: 'admin' });
  member = await callerWith(service, 'default', { username: 'mia', role: 'member', schemas: ['a'] });
});

const STRONG_ETAG = /^"[^"]+"$/;
const etag = (answer: CallResult): string => answer.headers.get('etag') ?? '';
const schemasOf = (answer: CallResult): unknown => (answer.body.data as { schemas: unknown }).schemas;

async function create(name: string, schemas: string[] = []): Promise<CallResult> {
  const created = await call(service, 'POST', '/spaces', { as: admin, json: { name, schemas } });
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status}`);
  return created;
}

test('every answer carrying one space carries a strong ETag; a write changes it', async (t) => {
  const created = await create('tagged', ['a']);
  t.regex(etag(created), STRONG_ETAG);
  const read = await call(service, 'GET', '/spaces/tagged', { as: admin });
  t.is(etag(read), etag(created));
  const replaced = await call(service, 'PUT', '/spaces/tagged', { as: admin, json: { schemas: ['a'] } });
  t.regex(etag(replaced), STRONG_ETAG);
  t.not(etag(replaced), etag(created));
  const deleted = await call(service, 'DELETE', '/spaces/tagged', { as: admin });
  t.is(etag(deleted), etag(replaced));
  t.is((await call(service, 'GET', '/spaces', { as: admin })).headers.get('etag'), null, 'a list carries no ETag');
});

test('a delete and a re-create of one name never repeat an ETag', async (t) => {
  const first = await create('phoenix');
  await call(service, 'DELETE', '/spaces/phoenix', { as: admin });
  const second = await create('phoenix');
  t.not(etag(second), etag(first));
  const stale = await call(service, 'PUT', '/spaces/phoenix', { as: admin, json: { schemas: ['x'] }, headers: { 'If-Match': etag(first) } });
  t.is(stale.status, 412);
});

test('GET with If-None-Match naming the ETag (or *) answers 304 without a body; another value answers 200', async (t) => {
  const created = await create('cached');
  for (const value of [etag(created), `W/${etag(created)}`, `"nope", ${etag(created)}`, '*']) {
    const fresh = await call(service, 'GET', '/spaces/cached', { as: admin, headers: { 'If-None-Match': value } });
    t.is(fresh.status, 304, value);
    t.deepEqual(fresh.body, {}, value);
    t.is(etag(fresh), etag(created), value);
  }
  const changed = await call(service, 'GET', '/spaces/cached', { as: admin, headers: { 'If-None-Match': '"something-else"' } });
  t.deepEqual([changed.status, changed.body], [200, created.body]);
  const absent = await call(service, 'GET', '/spaces/never-there', { as: admin, headers: { 'If-None-Match': '*' } });
  t.is(absent.status, 404);
});

test("another account's ETag names what it is shown: it changes with its permissions", async (t) => {
  await create('partial', ['a', 'b']);
  const asAdmin = await call(service, 'GET', '/spaces/partial', { as: admin });
  const shown = await call(service, 'GET', '/spaces/partial', { as: member });
  t.deepEqual(schemasOf(shown), ['a']);
  t.not(etag(shown), etag(asAdmin));
  const widened = await callerWith(service, 'default', { username: 'wide', role: 'member', schemas: ['a', 'b'] });
  const widenedView = await call(service, 'GET', '/spaces/partial', { as: widened, headers: { 'If-None-Match': etag(shown) } });
  t.is(widenedView.status, 200);
  t.deepEqual(schemasOf(widenedView), ['a', 'b']);
});

test('PUT with the current ETag succeeds; with a stale or unknown one it is 412 and changes nothing', async (t) => {
  const created = await create('guarded', ['a']);
  const first = await call(service, 'PUT', '/spaces/guarded', { as: admin, json: { schemas: ['b'] }, headers: { 'If-Match': etag(created) } });
  t.is(first.status, 200);
  for (const value of [etag(created), '"not-a-version"', `W/${etag(first)}`, 'garbage']) {
    const stale = await call(service, 'PUT', '/spaces/guarded', { as: admin, json: { schemas: ['c'] }, headers: { 'If-Match': value } });
    t.is(stale.status, 412, value);
    t.is(typeof stale.body.error, 'string', value);
  }
  const now = await call(service, 'GET', '/spaces/guarded', { as: admin });
  t.deepEqual([schemasOf(now), etag(now)], [['b'], etag(first)]);
  const listed = await call(service, 'PUT', '/spaces/guarded', { as: admin, json: { schemas: ['d'] }, headers: { 'If-Match': `"x", ${etag(first)}` } });
  t.is(listed.status, 200, 'one of several ETags matches');
  const any = await call(service, 'PUT', '/spaces/guarded', { as: admin, json: { schemas: ['e'] }, headers: { 'If-Match': '*' } });
  t.is(any.status, 200, '* means "exists"');
});

test('an If-Match sent empty names no ETag: PUT and DELETE are 412 and change nothing, as if the space had changed', async (t) => {
  // `If-Match: ${etag}` with an etag a client failed to read: the write was meant to be conditional.
  const created = await create('unread', ['a']);
  for (const value of ['', ' ']) {
    const put = await call(service, 'PUT', '/spaces/unread', { as: admin, json: { schemas: ['b'] }, headers: { 'If-Match': value } });
    t.is(put.status, 412, `PUT with If-Match ${JSON.stringify(value)}`);
    const deleted = await call(service, 'DELETE', '/spaces/unread', { as: admin, headers: { 'If-Match': value } });
    t.is(deleted.status, 412, `DELETE with If-Match ${JSON.stringify(value)}`);
  }
  const now = await call(service, 'GET', '/spaces/unread', { as: admin });
  t.deepEqual([now.status, schemasOf(now), etag(now)], [200, ['a'], etag(created)]);
});

test('DELETE honours If-Match; an absent space stays 404 whatever If-Match says', async (t) => {
  const created = await create('careful');
  const changed = await call(service, 'PUT', '/spaces/careful', { as: admin, json: { schemas: ['x'] } });
  const stale = await call(service, 'DELETE', '/spaces/careful', { as: admin, headers: { 'If-Match': etag(created) } });
  t.is(stale.status, 412);
  t.is((await call(service, 'GET', '/spaces/careful', { as: admin })).status, 200);
  const current = await call(service, 'DELETE', '/spaces/careful', { as: admin, headers: { 'If-Match': etag(changed) } });
  t.is(current.status, 200);
  for (const value of ['*', etag(changed)]) {
    t.is((await call(service, 'DELETE', '/spaces/careful', { as: admin, headers: { 'If-Match': value } })).status, 404, value);
    t.is((await call(service, 'PUT', '/spaces/careful', { as: admin, json: { schemas: [] }, headers: { 'If-Match': value } })).status, 404, value);
  }
});

test('two admins racing with the same ETag: one 200, one 412, every time', async (t) => {
  for (let round = 0; round < 10; round += 1) {
    const name = `duel-${round}`;
    const read = await create(name);
    const [mine, theirs] = await Promise.all(
      [admin, other].map((caller, index) => call(service, 'PUT', `/spaces/${name}`, { as: caller, json: { schemas: [`by-${index}`] }, headers: { 'If-Match': etag(read) } })),
    );
    t.deepEqual([mine.status, theirs.status].sort(), [200, 412], name);
    const winner = mine.status === 200 ? mine : theirs;
    t.deepEqual((await call(service, 'GET', `/spaces/${name}`, { as: admin })).body, winner.body, name);
  }
});

test('20 concurrent writers with the ETag they all read: exactly one succeeds, and its write is the state', async (t) => {
  const read = await create('crowd');
  const writes = await Promise.all(
    Array.from({ length: 20 }, (_, index) => call(service, 'PUT', '/spaces/crowd', { as: index % 2 ? admin : other, json: { schemas: [`w${index}`] }, headers: { 'If-Match': etag(read) } })),
  );
  const succeeded = writes.filter((write) => write.status === 200);
  t.is(succeeded.length, 1);
  t.is(writes.filter((write) => write.status === 412).length, 19);
  const [winner] = succeeded;
  t.deepEqual((await call(service, 'GET', '/spaces/crowd', { as: admin })).body, winner?.body);
});

test('20 concurrent writers, each retrying with the ETag it reads until it succeeds: no update is lost', async (t) => {
  await create('queue', []);
  const writer = async (index: number): Promise<number> => {
    for (let attempt = 1; ; attempt += 1) {
      const read = await call(service, 'GET', '/spaces/queue', { as: admin });
      const appended = [...(schemasOf(read) as string[]), `w${index}`];
      const write = await call(service, 'PUT', '/spaces/queue', { as: admin, json: { schemas: appended }, headers: { 'If-Match': etag(read) } });
      if (write.status === 200) return attempt;
      if (write.status !== 412) throw new Error(`writer ${index}: ${write.status}`);
    }
  };
  const attempts = await Promise.all(Array.from({ length: 20 }, (_, index) => writer(index)));
  const final = schemasOf(await call(service, 'GET', '/spaces/queue', { as: admin })) as string[];
  t.deepEqual([...final].sort(), Array.from({ length: 20 }, (_, index) => `w${index}`).sort(), 'every append is there');
  t.log(`${attempts.reduce((sum, count) => sum + count, 0)} attempts for 20 writes`);
});

/**
 * The property: whatever the interleaving of reads and conditional writes by a few admins, no
 * update is lost. Each write appends a mark of its own to the schemas its writer last read;
 * then the final state is the last successful write, the number of 200s is the number of
 * versions written, and each successful write was made on the state its writer had read.
 */
const operation = fc.record({ writer: fc.integer({ min: 0, max: 2 }), read: fc.boolean() });
const interleaving = fc.array(fc.array(operation, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 });

test('property: no interleaving of reads and conditional writes loses an update', async (t) => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(interleaving, async (batches) => {
      run += 1;
      const name = `prop-${run}`;
      const created = await create(name);
      const seen = Array.from({ length: 3 }, () => ({ etag: etag(created), schemas: [] as string[] }));
      const successes: Array<{ etag: string; schemas: string[]; basedOn: string[] }> = [];
      let mark = 0;
      for (const batch of batches) {
        await Promise.all(
          batch.map(async ({ writer, read }) => {
            if (read) {
              const answer = await call(service, 'GET', `/spaces/${name}`, { as: admin });
              seen[writer] = { etag: etag(answer), schemas: schemasOf(answer) as string[] };
              return;
            }
            const basedOn = seen[writer] ?? { etag: '', schemas: [] };
            mark += 1;
            const schemas = [...basedOn.schemas, `m${mark}`];
            const answer = await call(service, 'PUT', `/spaces/${name}`, { as: admin, json: { schemas }, headers: { 'If-Match': basedOn.etag } });
            if (answer.status === 200) successes.push({ etag: etag(answer), schemas, basedOn: basedOn.schemas });
            else if (answer.status !== 412) throw new Error(`PUT answered ${answer.status}`);
          }),
        );
      }
      const final = await call(service, 'GET', `/spaces/${name}`, { as: admin });
      const last = successes.at(-1);
      if (last === undefined) return schemasOf(final) !== undefined && (schemasOf(final) as string[]).length === 0;
      const versions = new Set(successes.map((success) => success.etag));
      const chained = successes.every((success, index) => JSON.stringify(success.basedOn) === JSON.stringify(index === 0 ? [] : successes[index - 1]?.schemas));
      return JSON.stringify(schemasOf(final)) === JSON.stringify(last.schemas) && etag(final) === last.etag && versions.size === successes.length && chained;
    }),
    { numRuns: 40 },
  );
  t.pass();
});
