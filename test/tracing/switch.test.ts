import test from 'ava';
import { tracingWanted } from '../../lib/tracing/switch.ts';

test('traces are on with an OTLP endpoint, for traces or for every signal, or the otlp exporter named', (t) => {
  t.true(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }));
  t.true(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }));
  t.true(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' }));
  t.true(tracingWanted({ OTEL_TRACES_EXPORTER: 'console, OTLP' }));
});

test('traces are off without those variables, with them empty, with the SDK disabled, or with an exporter other than otlp named', (t) => {
  t.false(tracingWanted({}));
  t.false(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '' }));
  t.false(tracingWanted({ OTEL_SERVICE_NAME: 'spaceport', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://collector:4318/v1/metrics' }));
  t.false(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }));
  t.false(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'TRUE' }));
  t.false(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }));
  t.false(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'console' }), 'another exporter named, not otlp');
  t.true(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'false' }));
});
