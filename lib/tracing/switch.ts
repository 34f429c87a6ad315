/** Whether the standard `OTEL_*` variables ask for traces over OTLP; apart from the rest of `lib/tracing`, so deciding loads no OpenTelemetry module. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (exporters.length > 0) return exporters.includes('otlp') && !exporters.includes('none');
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT) || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}
