/**
 * Whether the standard OpenTelemetry variables ask for traces: an OTLP endpoint, or the otlp
 * traces exporter named, and neither the SDK disabled nor the exporter set to `none`. Kept
 * apart from the rest of `lib/tracing` so that deciding loads no OpenTelemetry module.
 */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim().toLowerCase());
  if (exporters.includes('none')) return false;
  return exporters.includes('otlp') || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}
