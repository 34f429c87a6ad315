import autocannon from 'autocannon';
import type { BenchSettings } from './settings.ts';

/** What the load generator sends: every connection sends `requests` in turn. */
export interface LoadTarget {
  /** Origin of the server, `http://127.0.0.1:port`. */
  readonly origin: string;
  readonly requests: readonly autocannon.Request[];
  /** The answer a correct server gives to the first request (status, and text the body holds). */
  readonly expect: { readonly status: number; readonly bodyIncludes: string };
}

export interface Measurement {
  readonly requestsPerSecond: number;
  /** Milliseconds. */
  readonly p99: number;
  readonly completed: number;
  /** Connection errors, timeouts and non-2xx answers: a run with any is not a fair figure. */
  readonly failures: number;
  /**
   * CPU time the server process spent per answered request while measured. Unlike req/s it
   * barely depends on what else the machine runs, so it stays comparable on a shared machine.
   */
  readonly cpuMicrosecondsPerRequest?: number;
  /** The same for the database server the measurement talks to, where it runs on this machine. */
  readonly databaseCpuMicrosecondsPerRequest?: number;
}

/** A server process (or a database's processes) whose CPU time can be read, to price each request. */
export interface CpuProbe {
  cpuMicroseconds(): number | undefined;
}

/**
 * Checks the target answers as expected, warms it up, then measures it for `settings.seconds`;
 * with a `server` probe, also its CPU time per request over the measured seconds, and likewise
 * with a `database` probe.
 */
export async function measure(target: LoadTarget, settings: BenchSettings, server?: CpuProbe, database?: CpuProbe): Promise<Measurement> {
  await checkAnswer(target);
  if (settings.warmupSeconds > 0) await drive(target, { duration: settings.warmupSeconds }, settings);
  const serverCpu = startCpuReading(server);
  const databaseCpu = startCpuReading(database);
  const measured = await drive(target, { duration: settings.seconds }, settings);
  return {
    ...measured,
    cpuMicrosecondsPerRequest: serverCpu(measured.completed),
    databaseCpuMicrosecondsPerRequest: databaseCpu(measured.completed),
  };
}

/** Reads the probe now; the function it returns gives the CPU time spent since, per request. */
function startCpuReading(probe: CpuProbe | undefined): (requests: number) => number | undefined {
  const before = probe?.cpuMicroseconds();
  return (requests) => {
    const after = probe?.cpuMicroseconds();
    return before === undefined || after === undefined || requests === 0 ? undefined : (after - before) / requests;
  };
}

/** One server to measure: what to send it, its process, and the database it talks to, to price each request. */
export interface Subject {
  readonly target: LoadTarget;
  readonly server?: CpuProbe;
  readonly database?: CpuProbe;
}

/**
 * Measures the subjects in turn, `settings.rounds` times over, and gives each its median run (by
 * req/s): the speed of a shared machine drifts by a tenth and more within a minute, and servers
 * measured one after the other would each get a different machine. Measured in turn, each round
 * compares them on about the same one, and a median leaves out a round that drift spoiled. The
 * order turns from round to round.
 */
export async function measureInTurn<const Subjects extends readonly Subject[]>(subjects: Subjects, settings: BenchSettings): Promise<OnePerItem<Subjects, Measurement>> {
  const runs: Measurement[][] = subjects.map(() => []);
  for (let round = 0; round < settings.rounds; round += 1) {
    // Each round starts one subject further on: a place in the turn (first after a pause, right
    // after a heavier server) is a cost of its own, shared out this way instead of always paid by one.
    for (let step = 0; step < subjects.length; step += 1) {
      const index = (round + step) % subjects.length;
      const subject = subjects[index] as Subject;
      runs[index]?.push(await measure(subject.target, settings, subject.server, subject.database));
    }
  }
  return runs.map(medianRun) as OnePerItem<Subjects, Measurement>;
}

/** A `Value` for each item of `Items`: a tuple of the same length for a tuple. */
export type OnePerItem<Items extends readonly unknown[], Value> = { -readonly [Index in keyof Items]: Value };

/** The median of several runs of one subject (by req/s), with every run's failures. */
export function medianRun(runs: readonly Measurement[]): Measurement {
  const sorted = [...runs].sort((one, other) => one.requestsPerSecond - other.requestsPerSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (median === undefined) throw new Error('no run to take the median of');
  // A failure in any round is reported: that round's figure may be the one left out.
  return { ...median, failures: runs.reduce((sum, run) => sum + run.failures, 0) };
}

/**
 * Sends `amount` requests (no warm-up): the memory measurement. A slow server is cut off after
 * `limitSeconds`, so the run stays bounded; `completed` then says how many were answered.
 */
export async function send(target: LoadTarget, amount: number, limitSeconds: number, settings: BenchSettings): Promise<Measurement> {
  await checkAnswer(target);
  return drive(target, { amount }, settings, limitSeconds);
}

async function drive(target: LoadTarget, length: { duration?: number; amount?: number }, settings: BenchSettings, limitSeconds?: number): Promise<Measurement> {
  const run = autocannon({
    url: target.origin,
    connections: settings.connections,
    pipelining: 1,
    timeout: 10,
    // autocannon ends a run on its next sample: frequent samples end it on time.
    sampleInt: 100,
    requests: [...target.requests],
    ...length,
  });
  const latencies = answeredLatencies(run);
  const limit = limitSeconds === undefined ? undefined : setTimeout(() => run.stop(), limitSeconds * 1000);
  const result = await run;
  clearTimeout(limit);
  return {
    requestsPerSecond: result.duration > 0 ? result.requests.total / result.duration : 0,
    p99: percentile(latencies, 0.99) ?? result.latency.p99,
    completed: result.requests.total,
    failures: result.errors + result.timeouts + result.non2xx,
  };
}

/**
 * The milliseconds of every 2xx answer, as autocannon times them: its own histogram floors them
 * to whole milliseconds, which for answers under a few milliseconds makes a p99 ratio 1, 2 or 4.
 */
function answeredLatencies(run: autocannon.Instance): number[] {
  const latencies: number[] = [];
  run.on('response', (_client: unknown, status: number, _bytes: number, milliseconds: number) => {
    if (status >= 200 && status < 300) latencies.push(milliseconds);
  });
  return latencies;
}

/** The nearest-rank percentile (0.99: the least value at least 99 % of them do not exceed); undefined for none. */
export function percentile(values: readonly number[], rank: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.ceil(rank * sorted.length) - 1];
}

/** One request by hand first: a benchmark of 404s or 429s would measure the wrong thing. */
async function checkAnswer(target: LoadTarget): Promise<void> {
  const [listed] = target.requests;
  if (listed === undefined) throw new Error(`no request to send to ${target.origin}`);
  const first = listed.setupRequest ? listed.setupRequest({ ...listed }, {}) : listed;
  const url = new URL(first.path ?? '/', target.origin);
  const response = await fetch(url, { method: first.method ?? 'GET', headers: first.headers, body: first.body });
  const text = await response.text();
  if (response.status !== target.expect.status || !text.includes(target.expect.bodyIncludes)) {
    throw new Error(`${first.method ?? 'GET'} ${url.href} answered ${response.status} ${text.slice(0, 200)}; expected ${target.expect.status} with "${target.expect.bodyIncludes}"`);
  }
}
