import test from 'ava';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cli, make } from '../helpers/cli.ts';
import { serverUrl } from '../helpers/database.ts';
import { scratchFolder } from '../helpers/scratch.ts';

/**
 * The ten-minute path of docs/writing-routes.md, run as written (issue 37, point 4: its figures
 * had drifted): the code blocks of step 4 go into a project made by `make project`, and each
 * `make test PROJECT=shop` ends with the line the guide promises.
 */
const GUIDE = readFileSync(path.resolve(import.meta.dirname, '../../docs/writing-routes.md'), 'utf8');
const projectsDir = scratchFolder('guide');
test.after.always(() => rmSync(projectsDir, { recursive: true, force: true }));

/** The text of the guide from the bold heading `**<step>` to the next one. */
function step(heading: string): string {
  const start = GUIDE.indexOf(`**${heading}`);
  if (start === -1) throw new Error(`docs/writing-routes.md has no step "${heading}"`);
  const end = GUIDE.indexOf('\n**', start + 2);
  return GUIDE.slice(start, end === -1 ? GUIDE.indexOf('\n## ', start) : end);
}

function codeBlocks(text: string, language: string): string[] {
  return [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map(([, code]) => code);
}

/** Every `N passed, N failed` the text promises, in order. */
function promisedFigures(text: string): string[] {
  return [...text.matchAll(/(\d+ passed, \d+ failed)/g)].map(([, figure]) => figure);
}

async function testShop(): Promise<string | undefined> {
  const { stdout } = await make(['-o', 'chromium', 'test', 'PROJECT=shop', `PROJECTS_DIR=${projectsDir}`], serverUrl());
  return stdout.trim().split('\n').at(-1);
}

function edit(file: string, change: (text: string) => string): void {
  const full = path.join(projectsDir, 'shop', file);
  writeFileSync(full, change(readFileSync(full, 'utf8')));
}

test('the ten-minute path ends each `make test PROJECT=shop` with the figures the guide states', async (t) => {
  const created = await make(['project', 'NAME=shop', `PROJECTS_DIR=${projectsDir}`], serverUrl());
  t.is(created.code, 0, created.stderr);
  const [afterScaffold] = promisedFigures(step('2. Its tests pass'));
  t.is(await testShop(), afterScaffold, 'step 2');

  const fourth = step('4. A new authenticated route, test first.');
  const [newTest, handler, routeEntry] = codeBlocks(fourth, 'js');
  const [failing, passing] = promisedFigures(fourth);
  edit('test/routes.test.js', (text) => `${text}\n${newTest}`);
  t.is(await testShop(), failing, 'step 4, the test alone');

  edit('api/handlers.js', (text) => `${text}\n${handler}`);
  edit('api/routes.js', (text) => text.replace(/import \{ (.*) \} from '\.\/handlers\.js';/, "import { $1, getNote } from './handlers.js';").replace(/\n\]\);\n$/, `\n${routeEntry}]);\n`));
  t.is(await testShop(), passing, 'step 4, with the route');
  const checked = await cli(['check-projects'], serverUrl(), { PROJECTS_DIR: projectsDir });
  t.is(checked.code, 0, checked.stdout + checked.stderr);
});
