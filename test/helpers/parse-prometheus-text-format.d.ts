/** The parser's output, prom2json's shape (the package ships no types). */
declare module 'parse-prometheus-text-format' {
  interface Sample {
    readonly labels?: Readonly<Record<string, string>>;
    /** Counters, gauges, untyped. */
    readonly value?: string;
    /** Histograms: the cumulative count by upper bound (`le`), with their count and sum. */
    readonly buckets?: Readonly<Record<string, string>>;
    readonly count?: string;
    readonly sum?: string;
  }

  interface MetricFamily {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    readonly metrics: readonly Sample[];
  }

  function parsePrometheusTextFormat(text: string): MetricFamily[];
  export default parsePrometheusTextFormat;
}
