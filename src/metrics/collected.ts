import type { Metric, MetricObjectWithValues, MetricValue, Registry } from 'prom-client';

/** Labels of one sample. */
export type Labels = Record<string, string>;

/** One sample of a counter or a gauge. */
export interface Sample {
  labels: Labels;
  value: number;
}

/** One histogram's counts: `counts[i]` observations of at most `bounds[i]` (and above the bound before), the last above every bound. */
export interface HistogramSample {
  labels: Labels;
  counts: ArrayLike<number>;
  sum: number;
}

/**
 * A series read from Parley's own counts when Prometheus scrapes, not kept by prom-client as
 * the requests come: a request adds to a few plain numbers (~0.01 µs), where a prom-client
 * child's inc and observe measured 1.8–2.3 µs a request (they hash and check their labels each
 * time). prom-client's registry formats and escapes the samples with its own series (the
 * default process and Node.js metrics). A read that fails leaves the series out of that scrape.
 */
class CollectedMetric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'gauge' | 'histogram',
    private readonly read: () => MetricValue<string>[] | Promise<MetricValue<string>[]>,
  ) {}

  async get(): Promise<MetricObjectWithValues<MetricValue<string>>> {
    let values: MetricValue<string>[] = [];
    try {
      values = await this.read();
    } catch {
      // A scrape must not fail for one series (the database away for the event lag, say).
      values = [];
    }
    return { name: this.name, help: this.help, type: this.type as never, aggregator: 'sum', values } as unknown as MetricObjectWithValues<MetricValue<string>>;
  }
}

function register(registry: Registry, metric: CollectedMetric): void {
  registry.registerMetric(metric as unknown as Metric);
}

/** A counter whose samples `read` gives at each scrape (running totals). */
export function collectedCounter(registry: Registry, name: string, help: string, read: () => Sample[] | Promise<Sample[]>): void {
  register(registry, new CollectedMetric(name, help, 'counter', read as () => MetricValue<string>[]));
}

/** A gauge whose samples `read` gives at each scrape. */
export function collectedGauge(registry: Registry, name: string, help: string, read: () => Sample[] | Promise<Sample[]>): void {
  register(registry, new CollectedMetric(name, help, 'gauge', read as () => MetricValue<string>[]));
}

/** A histogram with upper bounds `bounds`, whose per-bucket counts `read` gives at each scrape. */
export function collectedHistogram(registry: Registry, name: string, help: string, bounds: readonly number[], read: () => HistogramSample[]): void {
  register(
    registry,
    new CollectedMetric(name, help, 'histogram', () => {
      const values: MetricValue<string>[] = [];
      for (const sample of read()) {
        let cumulative = 0;
        for (let bucket = 0; bucket <= bounds.length; bucket++) {
          cumulative += sample.counts[bucket] ?? 0;
          const le = bucket < bounds.length ? String(bounds[bucket]) : '+Inf';
          values.push({ metricName: `${name}_bucket`, labels: Object.assign({}, sample.labels, { le }), value: cumulative } as MetricValue<string>);
        }
        values.push({ metricName: `${name}_sum`, labels: sample.labels, value: sample.sum } as MetricValue<string>);
        values.push({ metricName: `${name}_count`, labels: sample.labels, value: cumulative } as MetricValue<string>);
      }
      return values;
    }),
  );
}

/** The bucket of `value` among the upper `bounds` (bounds.length when above them all). */
export function bucketOf(bounds: readonly number[], value: number): number {
  let bucket = 0;
  while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
  return bucket;
}
