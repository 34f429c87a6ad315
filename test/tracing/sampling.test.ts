import test from 'ava';
import { ConfigError } from '../../lib/config/index.ts';
import { defaultSampler } from '../../lib/tracing/sampling.ts';

test('without OTEL_TRACES_SAMPLER, a caller\'s sampled flag decides, and one new trace in ten is recorded', (t) => {
  t.is(String(defaultSampler({})), 'ParentBased{root=TraceIdRatioBased{0.1}, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}');
  t.is(String(defaultSampler({ OTEL_TRACES_SAMPLER: ' ' })), String(defaultSampler({})));
});

test('OTEL_TRACES_SAMPLER_ARG sets that ratio', (t) => {
  t.regex(String(defaultSampler({ OTEL_TRACES_SAMPLER_ARG: '0.25' })), /^ParentBased\{root=TraceIdRatioBased\{0.25\}/);
  t.regex(String(defaultSampler({ OTEL_TRACES_SAMPLER_ARG: '0' })), /^ParentBased\{root=TraceIdRatioBased\{0\}/);
  t.regex(String(defaultSampler({ OTEL_TRACES_SAMPLER_ARG: '' })), /^ParentBased\{root=TraceIdRatioBased\{0.1\}/);
});

test('a ratio that is not a number from 0 to 1 stops start-up, naming the variable', (t) => {
  for (const given of ['1.5', '-0.1', 'ten percent']) {
    const error = t.throws(() => defaultSampler({ OTEL_TRACES_SAMPLER_ARG: given }), { instanceOf: ConfigError });
    t.is(error?.message, `environment variable OTEL_TRACES_SAMPLER_ARG: ${JSON.stringify(given)} is not a ratio from 0 to 1`);
  }
});

test('with OTEL_TRACES_SAMPLER named, the SDK builds that sampler and reads its own argument', (t) => {
  t.is(defaultSampler({ OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: 'not read here' }), undefined);
});
