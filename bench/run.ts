import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { seedAccounts } from './harness/accounts.ts';
import { openScratchDatabase } from './harness/database.ts';
import { seedEvents } from './harness/documents.ts';
import { runToTheEnd, type Cleanups } from './harness/lifetime.ts';
import { startChildServer } from './harness/processes.ts';
import { serviceProjects } from './harness/projects.ts';
import { serviceProcess, serviceSetup } from './harness/service.ts';
import { benchSettings, type BenchSettings } from './harness/settings.ts';
import type { Section } from './harness/results.ts';
import { formatTable } from './harness/table.ts';
import { accountsSection } from './scenarios/accounts.ts';
import { authenticationSections } from './scenarios/authentication.ts';
import type { BenchContext } from './scenarios/context.ts';
import { documentsSection } from './scenarios/documents.ts';
import { heartbeatSection } from './scenarios/heartbeat.ts';
import { memorySection } from './scenarios/memory.ts';
import { noisyNeighbourSection } from './scenarios/noisy-neighbour.ts';
import { poolerSection } from './scenarios/pooler.ts';
import { citusSection } from './scenarios/citus.ts';
import { routingSection } from './scenarios/routing.ts';

function progress(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

/**
 * `make bench` (SPEC §14): seeds a scratch database, starts the real service and the comparison
 * servers in child processes, drives each with autocannon on loopback, and prints one table.
 */
async function main(cleanups: Cleanups): Promise<void> {
  const settings = benchSettings();
  const root = mkdtempSync(path.join(tmpdir(), 'spaceport-bench-'));
  cleanups.add(() => rmSync(root, { recursive: true, force: true }));
  // Dropped even when the run is interrupted while the database is being made.
  const opening = openScratchDatabase();
  cleanups.add(async () => (await opening.catch(() => undefined))?.drop());
  const database = await opening;
  progress(`scratch database ${database.name}, ${settings.accounts.toLocaleString('en-US')} accounts`);
  const usernames = await seedAccounts(database.url, settings.accounts);
  // Always: the served fixture declares item 7's index, which must not be built while other items are measured.
  const events = settings.items.has(7) ? settings.documents : 0;
  if (events > 0) progress(`${events.toLocaleString('en-US')} documents and their declared index`);
  const rangeStarts = await seedEvents(database.url, events);
  const context: BenchContext = {
    settings,
    setup: serviceSetup(database.url, root),
    projectsDir: serviceProjects(root),
    usernames,
    rangeStarts,
    progress,
  };
  const sections = await measureEverything(context);
  process.stdout.write(`${describeRun(settings)}\n\n${formatTable(sections)}\n`);
}

/**
 * Items 1 to 3 and 6 to 9 share one service; 4 and 5 start their own (other projects, a fresh
 * process). `BENCH_ITEMS` picks some of them.
 */
async function measureEverything(context: BenchContext): Promise<Section[]> {
  const chosen = (item: number) => context.settings.items.has(item);
  const sections: Section[] = [];
  if ([1, 2, 3, 6, 7, 8, 9].some(chosen)) {
    const service = await startChildServer(serviceProcess(context.setup, 'spaceport', context.projectsDir, 'sample'));
    try {
      if (chosen(1)) sections.push(await heartbeatSection(context, service));
      if (chosen(2)) sections.push(...(await authenticationSections(context, service)));
      if (chosen(3)) sections.push(await accountsSection(context, service));
      if (chosen(6)) sections.push(await poolerSection(context, service));
      if (chosen(7)) sections.push(await documentsSection(context, service));
      if (chosen(8)) sections.push(await citusSection(context, service));
      if (chosen(9)) sections.push(await noisyNeighbourSection(context, service));
    } finally {
      await service.stop();
    }
  }
  if (chosen(4)) sections.push(await routingSection(context));
  if (chosen(5)) sections.push(await memorySection(context));
  return sections;
}

function describeRun(settings: BenchSettings): string {
  const processors = cpus();
  return [
    `spaceport bench: Node ${process.version}, ${processors.length} × ${processors[0]?.model.trim() ?? 'unknown CPU'}`,
    `autocannon on loopback: ${settings.connections} connections, ${settings.warmupSeconds} s warm-up + ${settings.seconds} s per server; every server in its own process`,
    ...(settings.changed.length > 0 ? [`settings changed from the defaults (${settings.changed.join(', ')}): the verdicts are indicative only`] : []),
  ].join('\n');
}

runToTheEnd('bench', main);
