import test from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { scaffoldCommands } from '../../lib/cli/scaffold.ts';
import { sharedVariableProblems } from '../../lib/projects/settings/values.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/** `make project`'s name check, in this process: the template's secret `apiKey` must be one the settings check accepts. */
const projectsDir = scratchFolder('scaffold-names');
process.env.PROJECTS_DIR = projectsDir;

for (const [name, variables, reader] of [
  ['node', 'NODE_*', 'Node.js itself reads (NODE_*)'],
  ['node-red', 'NODE_RED_*', 'Node.js itself reads (NODE_*)'],
  ['uv', 'UV_*', 'Node.js itself reads (UV_*)'],
  ['uv_tools', 'UV_TOOLS_*', 'Node.js itself reads (UV_*)'],
  ['otel', 'OTEL_*', 'OpenTelemetry itself reads (OTEL_*)'],
] as const) {
  test(`make project NAME=${name} is refused in one line, as the settings check would refuse its secret`, async (t) => {
    const error = await t.throwsAsync(scaffoldCommands.project([name]));
    t.is(error?.message, `NAME: project "${name}"'s secrets would be read from ${variables}, which ${reader}; choose another`);
    t.false(existsSync(path.join(projectsDir, name)));
    const [problem] = sharedVariableProblems([{ project: name, file: 'settings.js', setting: 'apiKey' }]);
    t.true(problem?.reason.endsWith(`which ${reader}; rename it`), 'the settings check refuses the same name');
  });
}

test('an ordinary name, even one starting like a refused one, is scaffolded', async (t) => {
  for (const name of ['nodes', 'uvx', 'shop']) {
    const output = await scaffoldCommands.project([name]);
    t.true(output.startsWith(`created ${path.join(projectsDir, name)}:`), output);
    t.true(existsSync(path.join(projectsDir, name, 'api', 'settings.js')));
    t.deepEqual(sharedVariableProblems([{ project: name, file: 'settings.js', setting: 'apiKey' }]), []);
  }
});
