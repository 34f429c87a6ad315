import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { ServiceUnderTest } from './service.ts';

export const METRICS_TOKEN = 'metrics-token-of-a-decent-length';

/** One sample line of the exposition: a histogram's `_bucket`, `_sum` and `_count` lines are samples of their own. */
export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Every sample of the exposition, by metric name (`x_count`, `x_bucket` for a histogram `x`). */
export type Exposition = ReadonlyMap<string, readonly Sample[]>;

/** `GET /metrics` with the token, read by a real Prometheus text parser (`readExposition`). */
export async function scrape(service: ServiceUnderTest, token = METRICS_TOKEN): Promise<Exposition> {
  const response = await service.fetch('/metrics', { headers: { authorization: `Bearer ${token}` } });
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}: ${await response.text()}`);
  return readExposition(await response.text());
}

/**
 * The text parsed by parse-prometheus-text-format, which throws on a line that breaks the
 * format. It folds the samples of a labelled histogram into one, losing their labels (it
 * follows prom2json's shape for unlabelled ones): its families are therefore read a second time
 * with the histograms declared untyped, so each `_bucket`, `_sum` and `_count` line keeps its labels.
 */
export function readExposition(text: string): Exposition {
  parsePrometheusTextFormat(text);
  const samples = new Map<string, Sample[]>();
  for (const family of parsePrometheusTextFormat(text.replace(/^(# TYPE \S+) histogram$/gm, '$1 untyped'))) {
    const known = samples.get(family.name) ?? [];
    known.push(...family.metrics.map((sample) => ({ labels: sample.labels ?? {}, value: Number(sample.value) })));
    samples.set(family.name, known);
  }
  return samples;
}

export function samplesOf(exposition: Exposition, name: string): readonly Sample[] {
  const found = exposition.get(name);
  if (found === undefined) throw new Error(`no metric ${name} in /metrics`);
  return found;
}

/** The value of the sample of `name` whose labels include `labels`; 0 when there is none. */
export function sampleValue(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  const sample = (exposition.get(name) ?? []).find((each) => Object.entries(labels).every(([label, value]) => each.labels[label] === value));
  return sample?.value ?? 0;
}

/** Distinct series: a histogram's series counts once (its `_count` line), whatever its buckets. */
export function seriesCount(exposition: Exposition): number {
  return [...exposition].filter(([name]) => !name.endsWith('_bucket') && !name.endsWith('_sum')).reduce((total, [, samples]) => total + samples.length, 0);
}
