import { setTimeout as sleep } from 'node:timers/promises';
import { figureBelow } from '../harness/goals.ts';
import { send, type Measurement } from '../harness/load.ts';
import { withChildServer, type ChildServer } from '../harness/processes.ts';
import type { Row, Section } from '../harness/results.ts';
import { serviceProcess } from '../harness/service.ts';
import { megabytes } from '../harness/table.ts';
import { systemToken } from '../harness/tokens.ts';
import type { BenchContext } from './context.ts';
import { fixtureRoute, getOneAccount, heartbeat, mixed } from './requests.ts';

/** Lets the event loop and the allocator calm down before a reading. */
const SETTLE_MS = 1000;
/** The requests are counted, not timed: this keeps a very slow service from stalling the run. */
const LIMIT_SECONDS = 150;
/** Issue 13: RSS may grow less than this over the second half of the requests. */
const SECOND_HALF_GROWTH_LIMIT_PERCENT = 3;

/**
 * SPEC §14.5: a freshly started service's RSS, then again halfway through and after a fixed
 * number of requests (public, JWT and database routes in turn). Growth that keeps its pace in
 * the second half is a leak; growth that levels off is the heap settling.
 */
export async function memorySection(context: BenchContext): Promise<Section> {
  const count = context.settings.memoryRequests;
  context.progress(`5. memory: ${count.toLocaleString('en-US')} requests`);
  const options = serviceProcess(context.setup, 'spaceport-memory', context.projectsDir, 'sample');
  const { halves, readings } = await withChildServer(options, async (service) => {
    const requests = mixed(service.origin, [
      heartbeat(service.origin),
      fixtureRoute(service.origin, systemToken(context.setup)),
      getOneAccount(service.origin, context.usernames.slice(0, 1)),
    ]);
    const rss = [await settledRss(service)];
    const measured: Measurement[] = [];
    for (const amount of [Math.ceil(count / 2), Math.floor(count / 2)]) {
      measured.push(await send(requests, amount, LIMIT_SECONDS / 2, context.settings));
      rss.push(await settledRss(service));
    }
    return { halves: measured, readings: rss };
  });
  const measurement = combined(halves);
  const [before = 0, halfway = 0, after = 0] = readings;
  const [firstHalf, secondHalf] = halves;
  const row: Row = {
    server: `spaceport, ${measurement.completed.toLocaleString('en-US')} requests`,
    measurement,
    note: `RSS ${megabytes(before)} before, ${megabytes(halfway)} after ${(firstHalf?.completed ?? 0).toLocaleString('en-US')}, ${megabytes(after)} after all (heartbeat, JWT route, getOneAccount in turn)`,
  };
  const growthPercent = halfway > 0 ? ((after - halfway) / halfway) * 100 : 0;
  const secondHalfRequests = (secondHalf?.completed ?? 0).toLocaleString('en-US');
  return {
    title: '5. memory',
    rows: [row],
    verdicts: [figureBelow(`RSS growth over the second ${secondHalfRequests} requests`, growthPercent, SECOND_HALF_GROWTH_LIMIT_PERCENT, '%', row)],
  };
}

async function settledRss(service: ChildServer): Promise<number> {
  await sleep(SETTLE_MS);
  return service.rssBytes();
}

/** The two halves as one run: requests over time, the worse p99, every failure. */
function combined(halves: readonly Measurement[]): Measurement {
  const completed = halves.reduce((sum, half) => sum + half.completed, 0);
  const seconds = halves.reduce((sum, half) => sum + (half.requestsPerSecond > 0 ? half.completed / half.requestsPerSecond : 0), 0);
  return {
    requestsPerSecond: seconds > 0 ? completed / seconds : 0,
    p99: Math.max(...halves.map((half) => half.p99)),
    completed,
    failures: halves.reduce((sum, half) => sum + half.failures, 0),
  };
}
