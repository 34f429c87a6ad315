import { setTimeout as sleep } from 'node:timers/promises';
import { send } from '../load.ts';
import { withChildServer } from '../processes.ts';
import { serviceProcess, systemToken } from '../service.ts';
import { megabytes, type Section } from '../table.ts';
import { fixtureRoute, getOneAccount, heartbeat, mixed } from '../targets.ts';
import type { BenchContext } from './context.ts';

/** Lets the event loop and the allocator calm down before a reading. */
const SETTLE_MS = 1000;
/** The requests are counted, not timed: this keeps a very slow service from stalling the run. */
const LIMIT_SECONDS = 150;

/**
 * SPEC §14.5: a freshly started service's RSS, then again after a fixed number of requests
 * (public, JWT and database routes in turn): growth that does not level off is a leak.
 */
export async function memorySection(context: BenchContext): Promise<Section> {
  const count = context.settings.memoryRequests;
  context.progress(`5. memory: ${count.toLocaleString('en-US')} requests`);
  const options = serviceProcess(context.setup, 'spaceport-memory', context.projectsDir, 'sample');
  const { measurement, before, after } = await withChildServer(options, async (service) => {
    await sleep(SETTLE_MS);
    const rssBefore = service.rssBytes();
    const requests = mixed(service.origin, [
      heartbeat(service.origin),
      fixtureRoute(service.origin, systemToken(context.setup)),
      getOneAccount(service.origin, context.usernames.slice(0, 1)),
    ]);
    const result = await send(requests, count, LIMIT_SECONDS, context.settings);
    await sleep(SETTLE_MS);
    return { measurement: result, before: rssBefore, after: service.rssBytes() };
  });
  return {
    title: '5. memory',
    rows: [{
      server: `spaceport, ${measurement.completed.toLocaleString('en-US')} requests`,
      measurement,
      note: `RSS ${megabytes(before)} before, ${megabytes(after)} after (heartbeat, JWT route, getOneAccount in turn)`,
    }],
  };
}
