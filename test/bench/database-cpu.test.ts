import test from 'ava';
import pg from 'pg';
import { databaseCpuProbe, isOnThisMachine } from '../../bench/harness/database-cpu.ts';
import { serverUrl } from '../helpers/database.ts';

test('a database on loopback or a Unix socket is on this machine; one named by another host is not', (t) => {
  for (const url of ['postgres://postgres@127.0.0.1:5432/test', 'postgres://localhost/test', 'postgres://[::1]:5432/test', 'postgres:///test', 'postgres://%2Frun%2Fpostgresql/test', 'postgres://u@/test?host=/run/postgresql']) {
    t.true(isOnThisMachine(url), url);
  }
  for (const url of ['postgres://postgres@db.example.com:5432/test', 'postgres://10.0.0.5/test', 'postgres://127.0.0.1/test?host=db.example.com']) {
    t.false(isOnThisMachine(url), url);
  }
});

test('the database is priced only where it runs on this machine', (t) => {
  t.is(databaseCpuProbe('postgres://postgres@db.example.com:5432/test'), undefined);
  t.not(databaseCpuProbe('postgres://postgres@127.0.0.1:5432/test'), undefined);
});

test("the database's CPU time grows by what a query costs its backend", async (t) => {
  const probe = databaseCpuProbe(serverUrl());
  if (probe === undefined) {
    t.log(`skipped: ${serverUrl()} is not on this machine`);
    return t.pass();
  }
  const client = new pg.Client(serverUrl());
  await client.connect();
  t.teardown(() => client.end());
  // The backend exists before the first read: only a process present at both reads is counted.
  const before = probe.cpuMicroseconds() ?? Number.NaN;
  await client.query('select sum(i) from generate_series(1, 2000000) as i');
  const spent = (probe.cpuMicroseconds() ?? Number.NaN) - before;
  // Two million rows take a backend a few tenths of a second of CPU; /proc counts in 10 ms ticks.
  t.true(spent >= 100_000, `${spent} µs`);
});
