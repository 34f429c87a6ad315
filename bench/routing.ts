import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openScratchDatabase } from './harness/database.ts';
import { runToTheEnd, type Cleanups } from './harness/lifetime.ts';
import { serviceSetup } from './harness/service.ts';
import { benchSettings } from './harness/settings.ts';
import { formatTable } from './harness/table.ts';
import { routingSection } from './scenarios/routing.ts';

/**
 * `node bench/routing.ts`: SPEC §14.4 on its own. Requests/s and p99 through the whole chain
 * with 500 projects of 20 routes each vs one project, and the start-up time of both; the
 * BENCH_* variables of bench/settings.ts shrink or grow the run.
 */
async function main(cleanups: Cleanups): Promise<void> {
  const settings = benchSettings();
  const root = mkdtempSync(path.join(tmpdir(), 'spaceport-bench-routing-'));
  cleanups.add(() => rmSync(root, { recursive: true, force: true }));
  const opening = openScratchDatabase();
  cleanups.add(async () => (await opening.catch(() => undefined))?.drop());
  const database = await opening;
  const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
  const section = await routingSection({ settings, setup: serviceSetup(database.url, root), projectsDir: root, usernames: [], rangeStarts: [], progress });
  process.stdout.write(`${formatTable([section])}\n`);
}

runToTheEnd('bench', main);
