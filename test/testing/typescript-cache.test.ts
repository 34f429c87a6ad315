import test from 'ava';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeTree } from '../helpers/projects.ts';

// The test workers keep each TypeScript module's stripped text (lib/testing/typescript-cache.ts):
// what a module runs must still be its source as it is now, with its own line numbers.
const run = promisify(execFile);
const CACHE_MODULE = path.resolve(import.meta.dirname, '../../lib/testing/typescript-cache.ts');

interface Folder {
  readonly root: string;
  readonly cache: string;
}

function moduleFolder(source: string): Folder {
  const root = writeTree({
    'package.json': JSON.stringify({ type: 'module' }),
    'hooks.ts': `import { keepStrippedTypeScript } from ${JSON.stringify(CACHE_MODULE)};\nkeepStrippedTypeScript(${JSON.stringify(path.join('CACHE'))});\n`,
    'subject.ts': source,
  });
  return { root, cache: path.join(root, 'CACHE') };
}

async function runSubject(folder: Folder): Promise<string> {
  const { stdout } = await run(process.execPath, ['--disable-warning=ExperimentalWarning', '--import=./hooks.ts', './subject.ts'], { cwd: folder.root });
  return stdout.trim();
}

function keptFiles(folder: Folder): string[] {
  return readdirSync(folder.cache).map((name) => readFileSync(path.join(folder.cache, name), 'utf8'));
}

test('a module runs as its source says, from the kept text the second time', async (t) => {
  const folder = moduleFolder('const greeting: string = "hello";\nconsole.log(greeting satisfies string);\n');
  t.is(await runSubject(folder), 'hello');
  const kept = keptFiles(folder);
  t.is(kept.length, 1);
  t.true(kept[0].startsWith('const greeting         = "hello";'), 'the types are blanked, not removed');
  t.is(await runSubject(folder), 'hello');
});

test('an edited module runs its new text', async (t) => {
  const folder = moduleFolder('console.log("first" as string);\n');
  t.is(await runSubject(folder), 'first');
  writeFileSync(path.join(folder.root, 'subject.ts'), 'console.log("second" as string);\n');
  t.is(await runSubject(folder), 'second');
  t.is(keptFiles(folder).length, 1, 'one kept file per module, replaced');
});

test('a kept file cut short is stripped again', async (t) => {
  const folder = moduleFolder('console.log(("whole" as string).length);\n');
  t.is(await runSubject(folder), '5');
  const [name] = readdirSync(folder.cache);
  writeFileSync(path.join(folder.cache, name), 'console.log("cut');
  t.is(await runSubject(folder), '5');
});

test("an error's stack names the line of the source", async (t) => {
  const source = 'interface Shape {\n  side: number;\n}\nconst shape: Shape = { side: 1 };\nconsole.log(new Error(String(shape.side)).stack?.split("\\n")[1]);\n';
  const folder = moduleFolder(source);
  t.regex(await runSubject(folder), /subject\.ts:5:13\)?$/);
  t.regex(await runSubject(folder), /subject\.ts:5:13\)?$/, 'from the kept text too');
});
