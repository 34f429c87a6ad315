import path from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { loadConfig } from '../../lib/config/index.ts';
import { configView } from '../../lib/facilities/config-view.ts';
import { withFacilityState } from '../../lib/facilities/current.ts';
import { BoundProjectSettings } from '../../lib/facilities/settings.ts';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, TEST_JWT_SECRET } from '../helpers/service.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * The `config` facility is really deeply frozen (SPEC §3, issue 14): `Object.isFrozen` is true
 * for it and for every object in it, for a route file as for the service's own code, while it
 * stays the configuration of the service serving the request.
 */
function unfrozenPaths(value: unknown, where = 'config'): string[] {
  if (value === null || typeof value !== 'object') return [];
  const own = Object.isFrozen(value) ? [] : [where];
  return [...own, ...Object.keys(value).flatMap((key) => unfrozenPaths((value as Record<string, unknown>)[key], `${where}.${key}`))];
}

const loaded = loadConfig({
  env: { JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: scratchFolder('config-view') },
  expert: { referer: { enabled: true, allow: ['example.com'] }, limits: { jsonBytes: 4096 } },
}).config;
const facilityState = { config: loaded, projectSettings: new BoundProjectSettings() };

/** A test reading `config` outside a request, as code its service imported does. */
function readingLoaded(work: (t: ExecutionContext) => void): (t: ExecutionContext) => void {
  return (t) => withFacilityState(facilityState, () => work(t));
}

test('Object.isFrozen holds for config and every object in it', readingLoaded((t) => {
  t.true(Object.isFrozen(configView));
  t.deepEqual(unfrozenPaths(configView), []);
  t.true(Object.keys(configView).length > 10);
}));

test('config reads as the loaded configuration, key for key', readingLoaded((t) => {
  t.deepEqual(Object.keys(configView).sort(), Object.keys(loaded).sort());
  t.deepEqual({ ...configView }, { ...loaded });
  t.is(configView.limits, loaded.limits, 'the sections are the loaded, frozen objects themselves');
  t.deepEqual(JSON.parse(JSON.stringify(configView)), JSON.parse(JSON.stringify(loaded)));
}));

test('no write reaches config, at any depth', readingLoaded((t) => {
  const writable = configView as unknown as Partial<Record<string, unknown>>;
  const limits = configView.limits as unknown as Record<string, unknown>;
  t.throws(() => {
    writable.port = 1;
  }, { instanceOf: TypeError });
  t.throws(() => {
    limits.jsonBytes = 1;
  }, { instanceOf: TypeError });
  t.throws(() => {
    delete writable.limits;
  }, { instanceOf: TypeError });
  t.throws(() => {
    writable.extra = true;
  }, { instanceOf: TypeError });
  t.throws(() => Object.defineProperty(writable, 'port', { value: 2 }), { instanceOf: TypeError });
  t.is(configView.port, loaded.port);
  t.is(configView.limits.jsonBytes, 4096);
}));

const ROUTES = `import config from 'spaceport/config';

function unfrozenPaths(value, where = 'config') {
  if (value === null || typeof value !== 'object') return [];
  const own = Object.isFrozen(value) ? [] : [where];
  return [...own, ...Object.keys(value).flatMap((key) => unfrozenPaths(value[key], where + '.' + key))];
}

export default [
  {
    method: 'GET',
    path: '/frozen',
    skipAuth: true,
    function: (req, res) => res.json({ frozen: Object.isFrozen(config), unfrozen: unfrozenPaths(config), jsonBytes: config.limits.jsonBytes }),
  },
];
`;

test('a handler finds config deeply frozen, and it is its own service\'s', async (t) => {
  await migrateFileDatabase();
  const projectsDir = path.join(writeTree({ 'projects/frozen/api/routes.js': ROUTES }), 'projects');
  const [first, second] = await Promise.all([
    startWithProjects(t, projectsDir, { expert: { limits: { jsonBytes: 2048 } } }),
    startWithProjects(t, projectsDir, { expert: { limits: { jsonBytes: 3072 } } }),
  ]);
  t.deepEqual(await json(await first.fetch('/api/frozen/frozen')), { frozen: true, unfrozen: [], jsonBytes: 2048 });
  t.deepEqual(await json(await second.fetch('/api/frozen/frozen')), { frozen: true, unfrozen: [], jsonBytes: 3072 });
});

test.after.always(dropTestDatabase);
