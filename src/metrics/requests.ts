import { bucketOf, type HistogramSample, type Sample } from './collected.js';

/** Upper bounds of the request latency buckets, in seconds. */
export const LATENCY_BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** The route label of requests no route matched (404s, and URLs the router refused). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The answers of one route template and method: counts by status (and by app, when the
 * deployment asked for per-app series), and the latency histogram. Made when the route is
 * registered, so that a request only adds to numbers: no label set, key or object per request.
 */
export class RouteCounts {
  private readonly statuses = new Map<number, number>();
  /** By app id, then status: only with per-app series. */
  private readonly apps: Map<string, Map<number, number>> | undefined;
  private readonly buckets = new Float64Array(LATENCY_BOUNDS.length + 1);
  private sum = 0;

  constructor(
    readonly route: string,
    readonly method: string,
    perApp: boolean,
  ) {
    this.apps = perApp ? new Map() : undefined;
  }

  /** One answer: its status, how long it took (ms), and its app ('' when none was resolved). */
  observe(status: number, elapsedMs: number, appId: string): void {
    const statuses = this.apps === undefined ? this.statuses : this.appStatuses(appId);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    const seconds = elapsedMs / 1000;
    this.sum += seconds;
    this.buckets[bucketOf(LATENCY_BOUNDS, seconds)]!++;
  }

  private appStatuses(appId: string): Map<number, number> {
    let statuses = this.apps!.get(appId);
    if (statuses === undefined) this.apps!.set(appId, (statuses = new Map()));
    return statuses;
  }

  samples(into: Sample[]): void {
    const base = { route: this.route, method: this.method };
    if (this.apps === undefined) {
      for (const [status, value] of this.statuses) into.push({ labels: Object.assign({ status: String(status) }, base), value });
      return;
    }
    for (const [app, statuses] of this.apps) {
      for (const [status, value] of statuses) into.push({ labels: Object.assign({ status: String(status), app: app || 'none' }, base), value });
    }
  }

  latency(): HistogramSample | undefined {
    let count = 0;
    for (const n of this.buckets) count += n;
    return count === 0 ? undefined : { labels: { route: this.route, method: this.method }, counts: this.buckets, sum: this.sum };
  }
}

/** Every route's counts (see RouteCounts), read by the metrics at each scrape. */
export class RequestCounts {
  private readonly routes: RouteCounts[] = [];

  constructor(private readonly perApp: boolean) {}

  /** The counts of a route template and method, made once when the route is registered. */
  route(route: string, method: string): RouteCounts {
    const existing = this.routes.find((counts) => counts.route === route && counts.method === method);
    if (existing) return existing;
    const counts = new RouteCounts(route, method, this.perApp);
    this.routes.push(counts);
    return counts;
  }

  requests(): Sample[] {
    const samples: Sample[] = [];
    for (const counts of this.routes) counts.samples(samples);
    return samples;
  }

  latencies(): HistogramSample[] {
    const samples: HistogramSample[] = [];
    for (const counts of this.routes) {
      const sample = counts.latency();
      if (sample) samples.push(sample);
    }
    return samples;
  }
}
