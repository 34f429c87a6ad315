import test from 'ava';
import { call, callerWith, newTenant, type Caller } from '../helpers/spaces.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

// Known, not mended (review of limits.resultBytes): the bound is documented as a guard against a
// project's find({}).toArray(), but it cuts the service's own unpaged reads as well. GET /spaces lists
// every space with every schema in one statement, and a history page may hold 20 000 schema names:
// under an operator's bound of 256 KiB (the key allows 1024 bytes and up), three spaces of 1 000
// schemas are a 500 "Internal Server Error", logged as an unhandled ResultTooLarge; at the default
// 64 MiB, about 130 spaces of 1 000 schemas of 128 four-byte characters are.

let service: ServiceUnderTest;
let boss: Caller;

serviceForFile({ expert: { spaces: { enabled: true }, limits: { resultBytes: 256 * 1024 } } }, async (started) => {
  service = started;
  const tenant = await newTenant(service);
  boss = await callerWith(service, tenant, { username: 'boss', role: 'admin' });
  for (const name of ['one', 'two', 'three']) {
    const schemas = Array.from({ length: 1000 }, (_, index) => `${name}-${index}-`.padEnd(128, 'x'));
    const created = await call(service, 'POST', '/spaces', { as: boss, json: { name, schemas } });
    if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  }
});

test.failing('GET /spaces lists three spaces of 1 000 schemas under a result bound of 256 KiB', async (t) => {
  const listed = await call(service, 'GET', '/spaces', { as: boss });
  t.log(listed.status, JSON.stringify(listed.body));
  t.is(listed.status, 200);
});
