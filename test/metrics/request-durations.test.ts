import test from 'ava';
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { METHOD_LABELS, methodNumber } from '../../lib/metrics/labels.ts';
import { RequestDurations } from '../../lib/metrics/request-durations.ts';

const BOUNDS = [0.0005, 0.001, 0.01, 0.1, 1];
const NAME = 'requests_seconds';
const HELP = 'Request durations.';

const observation = fc.record({
  project: fc.constantFrom('', 'sample', 'shop'),
  route: fc.constantFrom('GET /a', 'POST /b/:id', 'none', 'GET /"quoted"\\path'),
  method: fc.constantFrom('GET', 'POST', 'DELETE', 'PROPFIND', 'OPTIONS'),
  status: fc.constantFrom(200, 201, 404, 429, 500),
  // Bounds themselves included: a value equal to a bound counts in that bound's bucket.
  seconds: fc.oneof(fc.constantFrom(...BOUNDS, 0, 5), fc.double({ min: 0, max: 3, noNaN: true })),
});

/** The exposition's lines, sorted: the two order their series differently, and nothing else may differ. */
async function lines(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter(Boolean).sort();
}

test('the same observations give the same exposition as prom-client\'s own Histogram, line for line', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
      const reference = new Registry();
      const histogram = new Histogram({ name: NAME, help: HELP, labelNames: ['method', 'project', 'route', 'status'], buckets: BOUNDS, registers: [reference] });
      const fast = new RequestDurations(NAME, HELP, BOUNDS, METHOD_LABELS);
      const registry = new Registry();
      registry.registerMetric(fast.asMetric());
      for (const { project, route, method, status, seconds } of observations) {
        const number = methodNumber(method);
        histogram.observe({ method: METHOD_LABELS[number], project, route, status }, seconds);
        fast.observe(project, route, number, status, seconds);
      }
      t.deepEqual(await lines(registry), await lines(reference));
    }),
    { numRuns: 100 },
  );
});

test('a method outside the named ones is one series, `other`', async (t) => {
  const fast = new RequestDurations(NAME, HELP, BOUNDS, METHOD_LABELS);
  for (const method of ['PROPFIND', 'MKCALENDAR', 'LINK', 'PURGE']) fast.observe('', 'none', methodNumber(method), 405, 0.001);
  const { values } = await fast.get();
  const counts = values.filter((sample) => sample.metricName === `${NAME}_count`);
  t.deepEqual(counts.map((sample) => [sample.labels.method, sample.value]), [['other', 4]]);
});

test('reset empties every series, as resetMetrics expects of a registered metric', async (t) => {
  const fast = new RequestDurations(NAME, HELP, BOUNDS, METHOD_LABELS);
  const registry = new Registry();
  registry.registerMetric(fast.asMetric());
  fast.observe('sample', 'GET /a', 0, 200, 0.002);
  registry.resetMetrics();
  t.deepEqual(await lines(registry), [`# HELP ${NAME} ${HELP}`, `# TYPE ${NAME} histogram`]);
});
