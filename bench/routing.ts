import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openScratchDatabase } from './harness/database.ts';
import { serviceSetup } from './harness/service.ts';
import { benchSettings } from './harness/settings.ts';
import { formatTable } from './harness/table.ts';
import { routingSection } from './scenarios/routing.ts';

/**
 * `node bench/routing.ts`: SPEC §14.4 on its own. Requests/s and p99 through the whole chain
 * with 500 projects of 20 routes each vs one project, and the start-up time of both; the
 * BENCH_* variables of bench/settings.ts shrink or grow the run.
 */
async function main(): Promise<void> {
  const settings = benchSettings();
  const root = mkdtempSync(path.join(tmpdir(), 'spaceport-bench-routing-'));
  const database = await openScratchDatabase();
  try {
    const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
    const section = await routingSection({ settings, setup: serviceSetup(database.url, root), projectsDir: root, usernames: [], rangeStarts: [], progress });
    process.stdout.write(`${formatTable([section])}\n`);
  } finally {
    await database.drop();
    rmSync(root, { recursive: true, force: true });
  }
}

// An explicit exit: an embedded PostgreSQL, when one was started, would keep the process alive.
main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
