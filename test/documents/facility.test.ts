import test from 'ava';
import { db, documentStore } from '../../lib/documents/index.ts';
import { runInTenant } from '../../lib/tenancy/index.ts';
import { serviceForFile, type ServiceUnderTest } from '../helpers/service.ts';

let service: ServiceUnderTest;

serviceForFile({ tenants: ['acme', 'globex'] }, (started) => {
  service = started;
});

function inTenant<Result>(tenant: string, work: () => Promise<Result>): Promise<Result> {
  return runInTenant(service.runtime, tenant, work);
}

test('db works in the tenant of the current context, taken at each operation', async (t) => {
  const notes = db.collection('notes');
  await inTenant('acme', () => notes.insertOne({ _id: 'n1', text: 'for acme' }));
  await inTenant('globex', () => notes.insertOne({ _id: 'n1', text: 'for globex' }));
  t.deepEqual(await inTenant('acme', () => notes.find().toArray()), [{ _id: 'n1', text: 'for acme' }]);
  t.deepEqual(await inTenant('globex', () => notes.findOne({ _id: 'n1' })), { _id: 'n1', text: 'for globex' });
  t.deepEqual(await documentStore(service.runtime.tenantDatabase, 'acme').collection('notes').findOne({}), { _id: 'n1', text: 'for acme' });
});

test('a cursor made in one context runs in the context of toArray', async (t) => {
  await inTenant('acme', () => db.collection('cursor').insertOne({ owner: 'acme' }));
  const cursor = db.collection('cursor').find({});
  t.deepEqual(await inTenant('globex', () => cursor.toArray()), []);
});

test('db outside a request context fails clearly instead of using some tenant', async (t) => {
  const error = await t.throwsAsync(db.collection('notes').find().toArray());
  t.is(error.message, "db is used outside a request: no tenant context (use it in a route's handler or auth: code run as the route file loads, or by a timer, has no request and so no tenant)");
  await t.throwsAsync(db.collection('notes').insertOne({ text: 'lost' }), { message: /no tenant context/ });
  t.is(await documentStore(service.runtime.tenantDatabase, 'default').collection('notes').countDocuments(), 0);
});

test('concurrent requests of different tenants do not mix', async (t) => {
  const writes = Array.from({ length: 20 }, (_, index) => {
    const tenant = index % 2 === 0 ? 'acme' : 'globex';
    return inTenant(tenant, async () => {
      await new Promise((resolve) => setTimeout(resolve, index % 3));
      await db.collection('mixed').insertOne({ tenant, index });
    });
  });
  await Promise.all(writes);
  for (const tenant of ['acme', 'globex']) {
    const documents = await inTenant(tenant, () => db.collection('mixed').find().toArray());
    t.is(documents.length, 10);
    t.true(documents.every((document) => document.tenant === tenant));
  }
});
