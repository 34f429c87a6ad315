/**
 * Passes ava's TAP output through and ends it with the line CI reads: `N passed, N failed`.
 * A run that printed no totals (the runner crashed) counts as one failure.
 */
import { createInterface } from 'node:readline';

let passed: number | undefined;
let failed = 0;
let skipped = 0;
for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(`${line}\n`);
  const pass = /^# pass (\d+)/.exec(line);
  const fail = /^# fail (\d+)/.exec(line);
  if (pass) passed = Number(pass[1]);
  if (fail) failed = Number(fail[1]);
  const skip = /^# skip (\d+)/.exec(line);
  if (skip) skipped = Number(skip[1]);
}
if (passed === undefined) {
  process.stdout.write('0 passed, 1 failed\n');
  process.exitCode = 1;
} else {
  process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  if (failed > 0) process.exitCode = 1;
}
