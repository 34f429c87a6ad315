import path from 'node:path';
import { databaseCpuProbe } from '../harness/database-cpu.ts';
import { p99AtMost, throughputAtLeast } from '../harness/goals.ts';
import { measureInTurn } from '../harness/load.ts';
import { withChildServer, type ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/results.ts';
import type { BenchContext } from './context.ts';
import { eventsRange } from './requests.ts';

const PG_POOL_SERVER = path.resolve(import.meta.dirname, '../servers/pg-pool.ts');

/**
 * SPEC §14.7: a document find with a range filter and a sort on a declared index, over the
 * seeded events, vs the same index read by hand on a bare pg pool, measured in turn.
 */
export async function documentsSection(context: BenchContext, service: ChildServer): Promise<Section> {
  context.progress(`7. a range find sorted on a declared index: spaceport and a bare pg pool, in turn, ${context.settings.rounds} rounds`);
  const options = { name: 'bare pg pool', script: PG_POOL_SERVER, env: { DATABASE_URL: context.setup.databaseUrl }, readyPath: '/' };
  const database = databaseCpuProbe(context.setup.databaseUrl);
  const [throughService, bare] = await withChildServer(options, (server) =>
    measureInTurn(
      [
        { target: eventsRange(service.origin, context.rangeStarts), server: service, database },
        { target: eventsRange(server.origin, context.rangeStarts), server, database },
      ],
      context.settings,
    ),
  );
  const documents = context.settings.documents.toLocaleString('en-US');
  const subject: Row = { server: 'spaceport (document store)', measurement: throughService, note: `${documents} documents in the tenant, 20 of a range of 100` };
  const floor: Row = { server: 'bare pg pool', measurement: bare, note: 'node:http + the same index read by hand' };
  return {
    title: '7. GET /api/benchmark/events/:from',
    rows: [subject, floor],
    verdicts: [throughputAtLeast(subject, floor, 0.7), p99AtMost(subject, floor, 2.0)],
  };
}
