import { ParentBasedSampler, type Sampler, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-node';
import { ConfigError } from '../config/index.ts';

/**
 * New traces recorded when `OTEL_TRACES_SAMPLER` is unset. Recording and exporting a request's span costs about half of
 * what the whole heartbeat costs (issue 38, +17 to +21 µs of CPU on 30-40); at one in ten, tracing costs +5 to +7 mostly.
 */
const DEFAULT_RATIO = 0.1;

/**
 * Unlike OpenTelemetry's own default (`parentbased_always_on`), `parentbased_traceidratio` at `OTEL_TRACES_SAMPLER_ARG`,
 * else one new trace in ten; a caller's `traceparent` decides whenever one comes. Undefined when `OTEL_TRACES_SAMPLER`
 * names a sampler: the SDK builds that one and reads its argument.
 */
export function defaultSampler(environment: NodeJS.ProcessEnv): Sampler | undefined {
  if ((environment.OTEL_TRACES_SAMPLER ?? '').trim() !== '') return undefined;
  return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratioFrom(environment.OTEL_TRACES_SAMPLER_ARG)) });
}

function ratioFrom(given: string | undefined): number {
  if (given === undefined || given.trim() === '') return DEFAULT_RATIO;
  const ratio = Number(given);
  if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError(`environment variable OTEL_TRACES_SAMPLER_ARG: ${JSON.stringify(given)} is not a ratio from 0 to 1`);
  return ratio;
}
