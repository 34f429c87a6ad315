import { setTimeout as sleep } from 'node:timers/promises';
import { createKnex } from '../../lib/db/connect.ts';
import { createTenant } from '../../lib/tenancy/index.ts';
import { p99AtMost } from '../harness/goals.ts';
import { measure, medianRun, type Measurement } from '../harness/load.ts';
import type { ChildServer } from '../harness/processes.ts';
import type { Row, Section, Verdict } from '../harness/results.ts';
import type { BenchContext } from './context.ts';
import { getOneAccount } from './requests.ts';

const NOISY_TENANT = 'noisy';
const P99_FACTOR = 3;

/**
 * SPEC §17.6: item 3's getOneAccount (tenant `default`) alone, then beside a noisy tenant that
 * holds more transactions than its share of the pool, abandons others, and runs the largest
 * sort the store allows, in turn, `settings.rounds` times. The other tenant must lose no request
 * and keep its p99 within 3 × its p99 alone.
 */
export async function noisyNeighbourSection(context: BenchContext, service: ChildServer): Promise<Section> {
  context.progress(`9. getOneAccount alone and beside a noisy tenant, in turn, ${context.settings.rounds} rounds`);
  await prepareNoisyTenant(context.setup.databaseUrl, service.origin);
  const target = getOneAccount(service.origin, context.usernames);
  const alone: Measurement[] = [];
  const beside: Measurement[] = [];
  for (let round = 0; round < context.settings.rounds; round += 1) {
    alone.push(await measure(target, context.settings, service));
    const noise = startNoise(service.origin);
    try {
      await sleep(1000);
      beside.push(await measure(target, context.settings, service));
    } finally {
      await noise.stop();
    }
  }
  const subject: Row = { server: 'getOneAccount beside the noisy tenant', measurement: medianRun(beside), note: '12 transactions of 2 s, 4 abandoned ones, 2 largest sorts at once' };
  const floor: Row = { server: 'getOneAccount alone', measurement: medianRun(alone) };
  return { title: '9. A noisy tenant beside getOneAccount', rows: [subject, floor], verdicts: [noFailures(subject), p99AtMost(subject, floor, P99_FACTOR)] };
}

function noFailures(row: Row): Verdict {
  const failures = row.measurement.failures;
  return { target: 'the other tenant: 0 failed requests', actual: `${failures}`, outcome: failures === 0 ? 'met' : 'missed' };
}

async function prepareNoisyTenant(databaseUrl: string, origin: string): Promise<void> {
  const owner = createKnex(databaseUrl);
  try {
    await createTenant(owner, NOISY_TENANT);
  } finally {
    await owner.destroy();
  }
  for (let filled = 0; filled < 2000; filled += 500) {
    const response = await noisyRequest(origin, '/noise/fill?n=500');
    if (response.status !== 201) throw new Error(`9: filling the noisy tenant's documents answered ${response.status}`);
  }
}

function noisyRequest(origin: string, path: string, giveUpMs = 30_000): Promise<Response> {
  return fetch(`${origin}/api/benchmark${path}`, { method: 'POST', headers: { tenant: NOISY_TENANT }, signal: AbortSignal.timeout(giveUpMs) });
}

/** The noisy tenant's loops, until `stop`; their own answers (503 past its share) do not count. */
function startNoise(origin: string): { stop(): Promise<void> } {
  let stopping = false;
  const loop = (path: string, giveUpMs?: number) =>
    (async () => {
      while (!stopping) await noisyRequest(origin, path, giveUpMs).then((response) => response.arrayBuffer(), () => undefined);
    })();
  const loops = [
    ...Array.from({ length: 12 }, () => loop('/noise/hold?ms=2000')),
    ...Array.from({ length: 4 }, () => loop('/noise/hold?ms=20000', 200)),
    ...Array.from({ length: 2 }, () => loop('/noise/sort')),
  ];
  return {
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
    },
  };
}
