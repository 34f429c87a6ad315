import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The tests' scratch folders (test/helpers/scratch.ts) go when the test process ends: one CI run
 * left 1 208 `spaceport-*` folders in /tmp (48 MB in one of them) before they did.
 */
const run = promisify(execFile);
const HELPER = path.resolve(import.meta.dirname, '../helpers/scratch.ts');

/** What is left in a new $TMPDIR after a process ran `script`; `failing` if it is meant to fail. */
async function leftBy(script: string, failing = false): Promise<string[]> {
  const temporary = mkdtempSync(path.join(tmpdir(), 'scratch-test-'));
  try {
    const source = `import { removeScratch, scratchFolder } from ${JSON.stringify(HELPER)};\nimport { mkdirSync, writeFileSync } from 'node:fs';\n${script}`;
    const ran = run(process.execPath, ['--input-type=module', '--eval', source], { env: { ...process.env, TMPDIR: temporary } });
    await (failing ? ran.then(() => Promise.reject(new Error('the script was meant to fail')), (error: { stderr: string }) => assertFailedOnPurpose(error)) : ran);
    return readdirSync(temporary);
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
}

function assertFailedOnPurpose(error: { stderr: string }): void {
  if (error.stderr.includes('Cannot find') || error.stderr.includes('SyntaxError')) throw new Error(error.stderr);
}

test('folders made in a process, and what was written into them, are gone when it exits', async (t) => {
  const script = `
    const data = scratchFolder('data');
    mkdirSync(data + '/deep/er', { recursive: true });
    writeFileSync(data + '/deep/er/file.bin', Buffer.alloc(1 << 20));
    scratchFolder('projects');`;
  t.deepEqual(await leftBy(script), []);
});

test('they are gone when the process ends with an exit code or an uncaught error', async (t) => {
  t.deepEqual(await leftBy(`scratchFolder('failing'); process.exitCode = 1;`, true), []);
  t.deepEqual(await leftBy(`scratchFolder('throwing'); throw new Error('a failing test file');`, true), []);
});

test('a folder removed early is not a problem at exit; a parent of its own is honoured', async (t) => {
  const script = `
    const early = scratchFolder('early');
    removeScratch(early);
    const inner = scratchFolder('outer');
    scratchFolder('inner', inner);
    removeScratch(inner);`;
  t.deepEqual(await leftBy(script), []);
});

test('a folder is private to its owner and named for what it holds', async (t) => {
  const script = `
    import { statSync } from 'node:fs';
    const folder = scratchFolder('named');
    process.stdout.write(JSON.stringify({ name: folder, mode: statSync(folder).mode & 0o777 }));`;
  const temporary = mkdtempSync(path.join(tmpdir(), 'scratch-test-'));
  try {
    const source = `import { scratchFolder } from ${JSON.stringify(HELPER)};\n${script}`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '--eval', source], { env: { ...process.env, TMPDIR: temporary } });
    const { name, mode } = JSON.parse(stdout) as { name: string; mode: number };
    t.regex(path.basename(name), /^spaceport-named-\w{6}$/);
    t.is(path.dirname(name), temporary);
    t.is(mode, 0o700);
  } finally {
    rmSync(temporary, { recursive: true, force: true });
  }
});
