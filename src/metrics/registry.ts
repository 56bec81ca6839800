import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { collectedCounter, collectedHistogram } from './collected.js';
import { LATENCY_BOUNDS, RequestCounts } from './requests.js';

/** What a deployment asked of its metrics (PARLEY_METRICS_PORT, PARLEY_METRICS_PER_APP). */
export interface MetricsSettings {
  /** Series labelled by app (requests, rate-limit refusals, import records): one set of series per app. */
  perApp: boolean;
}

/** Upper bounds of the delivery attempt buckets, in seconds (a receiver has 5 s by default). */
const ATTEMPT_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The one registry of a Parley process (docs/metrics.md): made by buildApp when metrics are on,
 * and handed to the composition root, which registers the series read from each part's stats
 * at scrape time (container-metrics.ts). Only the request counts and the delivery attempts are
 * written as things happen.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly requests: RequestCounts;
  /** Attempts of the event log's deliveries (webhooks, notifications), by consumer and result. */
  readonly attempts: Histogram<'consumer' | 'result'>;

  constructor(readonly settings: MetricsSettings) {
    // process_* and nodejs_*: CPU, memory, heap spaces, GC, handles, and the event loop's delay.
    collectDefaultMetrics({ register: this.registry });
    this.requests = new RequestCounts(settings.perApp);
    collectedCounter(this.registry, 'parley_http_requests_total', 'Requests answered, by route template, method and status.', () => this.requests.requests());
    collectedHistogram(this.registry, 'parley_http_request_duration_seconds', 'Time from a request’s arrival to its answer sent, by route template and method.', LATENCY_BOUNDS, () =>
      this.requests.latencies(),
    );
    this.attempts = new Histogram({
      name: 'parley_event_delivery_attempt_seconds',
      help: 'Delivery attempts of the event log’s consumers (webhooks, notifications), by consumer and result (ok, error).',
      labelNames: ['consumer', 'result'],
      buckets: ATTEMPT_BOUNDS,
      registers: [this.registry],
    });
  }

  /** The exposition text of every series, and its content type. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}
