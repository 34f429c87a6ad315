import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import test from 'ava';
import { json, migrateFileDatabase, startWithProjects, writeTree } from '../helpers/projects.ts';
import { dropTestDatabase, type ServiceUnderTest } from '../helpers/service.ts';

/** Reads `config` outside any request: as it is imported, and from a timer it starts then. */
const ROUTES = `import config from 'spaceport/config';

const atImport = config.projectsDir;
let fromTimer;
setInterval(() => {
  fromTimer = config.projectsDir;
}, 5).unref();

export default [{ method: 'GET', path: '/seen', skipAuth: true, function: (req, res) => res.json({ atImport, fromTimer }) }];
`;

function projectsFolder(): string {
  return path.join(writeTree({ 'projects/clock/api/routes.js': ROUTES }), 'projects');
}

/** What the route file saw, once its timer has run since both services started. */
async function seen(service: ServiceUnderTest): Promise<Record<string, unknown>> {
  for (;;) {
    const body = await json(await service.fetch('/api/clock/seen'));
    if (body.fromTimer !== undefined) return body;
    await sleep(10);
  }
}

test('two services in one process: the code each imports reads its own service, at import and from the timers it starts', async (t) => {
  await migrateFileDatabase();
  const [firstDir, secondDir] = [projectsFolder(), projectsFolder()];
  const [first, second] = await Promise.all([startWithProjects(t, firstDir), startWithProjects(t, secondDir)]);
  // Long enough for the first route file's timer to fire after both services were made.
  await sleep(50);
  t.deepEqual(await seen(first), { atImport: firstDir, fromTimer: firstDir });
  t.deepEqual(await seen(second), { atImport: secondDir, fromTimer: secondDir });
});

test.after.always(dropTestDatabase);
