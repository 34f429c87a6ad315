import test, { type ExecutionContext } from 'ava';
import type { Knex } from 'knex';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DuplicateKeyError, documentStore } from '../../lib/documents/index.ts';
import { ProjectLoadError } from '../../lib/projects/index.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { dropTestDatabase, testDatabaseUrl, type ServiceUnderTest } from '../helpers/service.ts';
import { METRICS_TOKEN, sampleValue, scrape } from '../helpers/metrics.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { testKnex } from '../helpers/database.ts';

test.before(migrateFileDatabase);
test.after.always(dropTestDatabase);

const ROUTES = `import { db } from 'spaceport';
export default [
  { method: 'POST', path: '/tickets', skipAuth: true, function: async (req, res) => res.json(await db.collection('tickets').insertMany(req.body)) },
  { method: 'GET', path: '/urgent', skipAuth: true, function: async (req, res) => {
    const found = await db.collection('tickets').find({ priority: { $gte: 2 } }).sort({ priority: -1 }).toArray();
    res.json(found.map((ticket) => ticket._id));
  } },
];
`;

test('an index file with mistakes stops start-up with a problem naming the file and each entry', async (t) => {
  const indexes = `export default [
  { collection: 'tickets', fields: { priority: -1 }, uniqe: true },
  { collection: 'tickets', fields: { priority: 2 } },
  { collection: '', fields: {} },
  { collection: 'tickets', fields: JSON.parse('{"__proto__": 1}') },
  { collection: 'tickets', fields: { 'tags.0': 1, 'a..b': 1 } },
  { collection: 'tickets', fields: { priority: -1 } },
  'tickets',
  { collection: 'tickets', fields: { ['k'.repeat(64)]: 1, [Array.from({ length: 17 }, () => 'a').join('.')]: 1 } },
];
`;
  const root = writeTree({ 'projects/desk/api/routes.js': ROUTES, 'projects/desk/api/indexes.js': indexes });
  const error = await t.throwsAsync(startWithProjects(t, path.join(root, 'projects')), { instanceOf: ProjectLoadError });
  const file = path.join(root, 'projects/desk/api/indexes.js');
  t.deepEqual(error?.message.split('\n'), [
    'invalid project routes (10 problems):',
    `  ${file}: #0 tickets: unknown property "uniqe" (did you mean "unique"?)`,
    `  ${file}: #1 tickets: fields.priority must be 1 or -1 (got 2)`,
    `  ${file}: #2: collection must be a collection name, a string of 1 to 128 characters (got string)`,
    `  ${file}: #2: fields must be an object of 1 to 8 paths, each 1 or -1, such as {createdAt: -1} (got object)`,
    `  ${file}: #3 tickets: fields: "__proto__" cannot be a key, it names a prototype, not a field (in "__proto__")`,
    `  ${file}: #4 tickets: fields: the key "0" of "tags.0" must start with a letter or "_", hold only letters, digits, "_" and "-", and be at most 63 characters long`,
    `  ${file}: #4 tickets: fields: "a..b" is not a valid field path`,
    `  ${file}: #6: an index must be an object {collection, fields} (got string)`,
    `  ${file}: #7 tickets: fields: the key "${'k'.repeat(64)}" of "${'k'.repeat(64)}" must start with a letter or "_", hold only letters, digits, "_" and "-", and be at most 63 characters long`,
    `  ${file}: #7 tickets: fields: "${Array.from({ length: 17 }, () => 'a').join('.')}" has 17 keys; a declared path has at most 16`,
  ]);
});

test('two entries declaring one index are a problem', async (t) => {
  const indexes = "export default [{ collection: 'tickets', fields: { priority: -1 } }, { collection: 'tickets', fields: { priority: -1 }, unique: false }];\n";
  const root = writeTree({ 'projects/desk/api/routes.js': ROUTES, 'projects/desk/api/indexes.js': indexes });
  const error = await t.throwsAsync(startWithProjects(t, path.join(root, 'projects')), { instanceOf: ProjectLoadError });
  t.regex(error?.message ?? '', /#1 tickets: declares the same index as entry #0$/m);
});

test('a project\'s entries build at most 3 indexes over 6 paths in all, so its indexes cost other projects\' planning little', async (t) => {
  const entry = (n: number, paths: number) => `{ collection: 'c${n}', fields: { ${Array.from({ length: paths }, (_, k) => `f${k}: 1`).join(', ')} } }`;
  const tooMany = `export default [${Array.from({ length: 2 }, (_, n) => entry(n, 1)).join(', ')}, { collection: 'u', fields: { ref: 1 }, unique: true }];\n`;
  const root = writeTree({ 'projects/desk/api/routes.js': ROUTES, 'projects/desk/api/indexes.js': tooMany });
  const error = await t.throwsAsync(startWithProjects(t, path.join(root, 'projects')), { instanceOf: ProjectLoadError });
  t.regex(error?.message ?? '', /desk\/api\/indexes\.js: the entries build 4 indexes \(a unique entry builds two\); a project's entries build at most 3 \(each one slows the planning of every statement on documents\)$/m);

  const tooWide = `export default [${Array.from({ length: 2 }, (_, n) => entry(n, 4)).join(', ')}];\n`;
  const wide = writeTree({ 'projects/desk/api/routes.js': ROUTES, 'projects/desk/api/indexes.js': tooWide });
  const widened = await t.throwsAsync(startWithProjects(t, path.join(wide, 'projects')), { instanceOf: ProjectLoadError });
  t.regex(widened?.message ?? '', /desk\/api\/indexes\.js: 8 paths declared in all; a project declares at most 6/m);
});

/** Waits for the start-up build to log that it is done with `count` indexes. */
async function builtIndexes(logEntries: () => Array<Record<string, unknown>>, count: number): Promise<string[]> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const built = logEntries().filter((line) => line.msg === 'declared index built').map((line) => String(line.index));
    if (built.length >= count) return built;
    await sleep(100);
  }
  throw new Error('the declared indexes were not built in time');
}

// Serial: it starts services without declarations, which clean up what the file's other tests build.
test.serial('an index file removed leaves nothing behind: the next start drops its indexes', async (t) => {
  const indexes = "export default [{ collection: 'gone', fields: { at: 1 }, unique: true }];\n";
  const declaring = writeTree({ 'projects/desk/api/routes.js': ROUTES, 'projects/desk/api/indexes.js': indexes });
  const first = await startWithProjects(t, path.join(declaring, 'projects'));
  await builtIndexes(() => first.logs(), 2);
  await first.close();
  const plain = writeTree({ 'projects/desk/api/routes.js': ROUTES });
  const second = await startWithProjects(t, path.join(plain, 'projects'));
  const left = async () => (await second.runtime.knex.raw<{ rows: unknown[] }>("select from pg_indexes where tablename = 'documents' and indexname like '%\\_desk\\_gone\\_%'")).rows.length;
  for (let attempt = 0; attempt < 100 && (await left()) > 0; attempt++) await sleep(100);
  t.is(await left(), 0);
});

// Serial: the service drops what the file's other tests build (it does not declare it).
test.serial('a unique index the documents already break is named in the log, /readyz and a metric, and the writes it guards are refused', async (t) => {
  // The file's other tests declare on tickets too: they find neither these documents nor this index.
  const { projects } = await brokenUniqueIndex(t, 'tickets');

  const service = await startWithProjects(t, projects, { env: { METRICS_TOKEN } });
  const reported = await loggedLine(service, (line) => String(line.msg).startsWith('declared unique index could not be built'));
  t.like(reported, { project: 'desk', collection: 'tickets' });
  t.regex(String(reported?.msg), /writes to "tickets" are refused/);

  const ready = await service.fetch('/readyz');
  t.is(ready.status, 200, 'the other collections and tenants are served');
  t.like(await ready.json(), { status: 'ok', unbuiltIndexes: [{ project: 'desk', collection: 'tickets', index: reported?.index }] });
  t.is(sampleValue(await scrape(service), 'spaceport_declared_indexes_unbuilt'), 1);

  await createTenant(service.runtime.knex, 'other');
  const tickets = documentStore(service.runtime.tenantDatabase, 'other', service.runtime.declaredPaths).collection('tickets');
  await t.throwsAsync(tickets.insertOne({ ref: 'B' }), { message: /writes to "tickets" are refused: its declared unique index .* could not be built/ });
  await t.throwsAsync(tickets.updateOne({ ref: 'B' }, { $set: { ref: 'A' } }, { upsert: true }), { message: /refused/ });
  const posted = await service.fetch('/api/desk/tickets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ ref: 'C' }]) });
  t.is(posted.status, 503, 'a route that lets the error through answers 503');
  t.is((await service.fetch('/api/desk/urgent')).status, 200, 'reads go on');
  t.is((await documentStore(service.runtime.tenantDatabase, 'default', service.runtime.declaredPaths).collection('tickets').deleteOne({ _id: 'd2' })).deletedCount, 1, 'deletes go on, so the duplicates can be removed');
});

// Serial: the services drop what the file's other tests build (they do not declare it).
test.serial('a unique index another instance builds once the duplicates are gone guards writes everywhere within seconds, not after each instance restarts', async (t) => {
  const { projects, knex } = await brokenUniqueIndex(t, 'claims');
  const post = (service: Awaited<ReturnType<typeof startWithProjects>>, ref: string) =>
    service.fetch('/api/desk/tickets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([{ ref }]) });

  const first = await startWithProjects(t, projects);
  const reported = await loggedLine(first, (line) => String(line.msg).startsWith('declared unique index could not be built'));
  t.like(reported, { collection: 'claims' });
  t.is((await post(first, 'B')).status, 503, 'refused while the index is unbuilt');

  // The duplicates removed, another instance starts (a deploy, a restart of one) and builds the index.
  await knex.raw("delete from documents where collection = 'claims' and id = 'd2'");
  const second = await startWithProjects(t, projects);
  const built = await loggedLine(second, (line) => line.msg === 'declared index built' && line.index === reported?.index);
  t.true(built !== undefined, 'the second instance built the unique index');
  t.is((await post(second, 'C')).status, 200);

  // The first instance accepts writes again within its 2 s, and the index guards them.
  let status = 0;
  const started = Date.now();
  while (status !== 200 && Date.now() - started < 10_000) {
    status = (await post(first, 'D')).status;
    if (status !== 200) await sleep(200);
  }
  t.is(status, 200, `the first instance still refused writes ${Date.now() - started} ms after the index was built`);
  t.not((await post(first, 'A')).status, 200, 'a duplicate is refused by the index');
  const ready = (await (await first.fetch('/readyz')).json()) as Record<string, unknown>;
  t.is(ready.unbuiltIndexes, undefined);
});

test('declared indexes are built at start-up, serve the project\'s finds, and a unique one holds per tenant', async (t) => {
  const indexes = `export default [
  { collection: 'tickets', fields: { priority: -1 } },
  { collection: 'tickets', fields: { ref: 1 }, unique: true },
];
`;
  const root = writeTree({ 'projects/desk/api/routes.js': ROUTES, 'projects/desk/api/indexes.js': indexes });
  const service = await startWithProjects(t, path.join(root, 'projects'));
  const built = await builtIndexes(() => service.logs(), 3);
  t.is(built.length, 3);
  const { rows } = await service.runtime.knex.raw<{ rows: Array<{ indexname: string }> }>("select indexname from pg_indexes where tablename = 'documents' and indexname like 'doc%\\_desk\\_%' order by indexname");
  t.deepEqual(rows.map((row) => row.indexname).sort(), [...built].sort());

  const tickets = [{ _id: 't1', priority: 1, ref: 'A' }, { _id: 't2', priority: 3, ref: 'B' }, { _id: 't3', priority: '3' }, { _id: 't4', priority: [2, 0] }, { _id: 't5', priority: 2 }];
  const posted = await service.fetch('/api/desk/tickets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(tickets) });
  t.is(posted.status, 200);
  t.deepEqual(await json(await service.fetch('/api/desk/urgent')), ['t4', 't2', 't5'] as unknown as Record<string, unknown>, 'arrays sort after numbers; the string "3" is no number');

  const store = (tenant: string) => documentStore(service.runtime.tenantDatabase, tenant).collection('tickets');
  await t.throwsAsync(store('default').insertOne({ ref: 'A' }), { instanceOf: DuplicateKeyError });
  await t.notThrowsAsync(store('default').insertMany([{ ref: null }, { ref: null }, {}]), 'missing and null are not constrained');
  await createTenant(service.runtime.knex, 'other');
  await t.notThrowsAsync(store('other').insertOne({ ref: 'A' }), 'unique per tenant');
});

/**
 * A project declaring a unique index on `collection`'s `ref`, and two documents of tenant default that break it;
 * after the test the documents and the index go, and the knex it returns is destroyed.
 */
async function brokenUniqueIndex(t: ExecutionContext, collection: string): Promise<{ projects: string; knex: Knex }> {
  const routes = ROUTES.replaceAll("'tickets'", `'${collection}'`);
  const root = writeTree({ 'projects/desk/api/routes.js': routes, 'projects/desk/api/indexes.js': `export default [{ collection: '${collection}', fields: { ref: 1 }, unique: true }];\n` });
  const knex = testKnex(await testDatabaseUrl());
  t.teardown(async () => {
    await knex.raw('delete from documents where collection = ?', [collection]);
    const { rows } = await knex.raw<{ rows: Array<{ indexname: string }> }>(`select indexname from pg_indexes where tablename = 'documents' and indexname like 'doc_\\_desk\\_${collection}\\_%'`);
    for (const { indexname } of rows) await knex.raw(`drop index if exists ${indexname}`);
    await knex.destroy();
  });
  await createTenant(knex, 'default').catch(() => undefined);
  await knex.raw("insert into documents (tenant, collection, id, doc) values ('default', ?, 'd1', '{\"_id\": \"d1\", \"ref\": \"A\"}'), ('default', ?, 'd2', '{\"_id\": \"d2\", \"ref\": \"A\"}')", [collection, collection]);
  return { projects: path.join(root, 'projects'), knex };
}

/** The first line of `service`'s log that `matches`, waited for up to 20 s. */
async function loggedLine(service: ServiceUnderTest, matches: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown> | undefined> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const line = service.logs().find(matches);
    if (line !== undefined) return line;
    await sleep(100);
  }
  return undefined;
}
