import type { Kysely } from 'kysely';
import type { BatcherStats } from './db/batcher.js';
import { BATCH_SIZE_BOUNDS } from './db/batcher.js';
import type { Database } from './db/database.js';
import type { DB } from './db/schema.js';
import type { RenderedPages } from './http/rendered-pages.js';
import { collectedCounter, collectedGauge, collectedHistogram, type Sample } from './metrics/collected.js';
import type { Metrics } from './metrics/registry.js';
import type { CredentialCache } from './repositories/credential-cache.js';
import { EventLagRepository } from './repositories/events/event-lag.repository.js';
import type { EventFeed } from './services/event-feed.js';
import type { EventConsumer } from './services/events/consumer.js';
import type { EventDispatcher } from './services/events/dispatcher.js';
import type { ImportCounts } from './services/import-records.js';
import type { RateLimitsService } from './services/rate-limits.service.js';

// The metrics' part of the composition root (docs/metrics.md): each series below is read from
// a part's own stats() when Prometheus scrapes, so no part takes the registry, and nothing is
// counted twice. Only the requests (see installRequestMetrics) and the deliveries' attempts
// (measuredConsumer) are written as they happen.

/** The parts whose state the metrics show. */
export interface ObservedParts {
  database: Database;
  /** The coalesced calls (container-shared.ts), by name. */
  batchers: Record<string, { stats(): BatcherStats }>;
  credentials: CredentialCache;
  /** Users' auth tokens' lookups (the authToken header). */
  tokenOwners: { stats(): { hits: number; misses: number; entries: number } };
  pageCache: RenderedPages;
  eventFeed: EventFeed;
  eventDispatcher: EventDispatcher;
  /** The event log's consumers' connections (Database.consumerDb): where the cursors are read. */
  consumerDb: Kysely<DB>;
  rateLimits: RateLimitsService;
  imports: ImportCounts[];
}

/** Registers, on the metrics' registry, the series read from `parts` at each scrape. */
export function observeParts(metrics: Metrics, parts: ObservedParts): void {
  const { registry } = metrics;
  const perApp = metrics.settings.perApp;
  const pools = () => parts.database.poolStats();
  const poolGauge = (name: string, help: string, value: (pool: ReturnType<typeof pools>[number]) => number) =>
    collectedGauge(registry, name, help, () => pools().map((pool) => ({ labels: { pool: pool.pool }, value: value(pool) })));
  const poolCounter = (name: string, help: string, value: (pool: ReturnType<typeof pools>[number]) => number) =>
    collectedCounter(registry, name, help, () => pools().map((pool) => ({ labels: { pool: pool.pool }, value: value(pool) })));
  poolGauge('parley_db_pool_max_connections', 'Connections the pool may open.', (pool) => pool.max);
  poolGauge('parley_db_pool_open_connections', 'Connections the pool has open.', (pool) => pool.open);
  poolGauge('parley_db_pool_idle_connections', 'Open connections not in use.', (pool) => pool.idle);
  poolGauge('parley_db_pool_waiting', 'Callers waiting for a connection now.', (pool) => pool.waiting);
  poolCounter('parley_db_pool_acquired_total', 'Connections handed out.', (pool) => pool.acquired);
  poolCounter('parley_db_pool_waits_total', 'Connections a caller had to wait for (every connection was in use).', (pool) => pool.waited);
  poolCounter('parley_db_pool_wait_seconds_total', 'Time callers waited for a connection.', (pool) => pool.waitedMs / 1000);
  poolCounter('parley_db_pool_acquire_timeouts_total', 'Waits for a connection that timed out (answered 503).', (pool) => pool.timeouts);

  const batchers = () => Object.entries(parts.batchers).map(([name, batcher]) => ({ name, stats: batcher.stats() }));
  const batcherGauge = (name: string, help: string, value: (stats: BatcherStats) => number) =>
    collectedGauge(registry, name, help, () => batchers().map(({ name: batcher, stats }) => ({ labels: { batcher }, value: value(stats) })));
  batcherGauge('parley_batcher_queued', 'Items waiting for the next coalesced statement.', (stats) => stats.queued);
  batcherGauge('parley_batcher_in_flight', 'Coalesced statements running that hold a place.', (stats) => stats.inFlight);
  batcherGauge('parley_batcher_stalled', 'Coalesced statements past their stall time that gave up their place.', (stats) => stats.stalled);
  collectedHistogram(registry, 'parley_batcher_batch_size', 'Items per coalesced statement.', BATCH_SIZE_BOUNDS, () =>
    batchers().map(({ name, stats }) => ({ labels: { batcher: name }, counts: stats.sizes, sum: stats.items })),
  );

  const lag = new EventLagRepository(parts.consumerDb);
  collectedGauge(registry, 'parley_event_log_safe_id', 'The event log’s safe id: every event up to it has committed (the feed’s position).', () => {
    const safe = parts.eventFeed.safeId;
    return safe === undefined ? [] : [{ labels: {}, value: Number(safe) }];
  });
  collectedGauge(registry, 'parley_event_consumer_lag_events', 'Events between the safe id and the consumer’s cursor furthest behind (its fan-out’s lag).', async () => {
    const safe = parts.eventFeed.safeId;
    if (safe === undefined) return [];
    return (await lag.lowestCursors()).map(({ consumer, eventId }) => ({ labels: { consumer }, value: Math.max(0, Number(safe - BigInt(eventId))) }));
  });
  const consumers = () => Object.entries(parts.eventDispatcher.stats().consumers);
  collectedGauge(registry, 'parley_event_lanes_in_flight', 'Delivery lanes being sent by this process.', () =>
    consumers().map(([consumer, counts]) => ({ labels: { consumer }, value: counts.lanesInFlight })),
  );
  collectedCounter(
    registry,
    'parley_event_deliveries_total',
    'Deliveries settled by this process, by consumer and outcome: delivered, retried (to be tried again), failed, dropped (its event gone).',
    () => consumers().flatMap(([consumer, counts]) => (['delivered', 'retried', 'failed', 'dropped'] as const).map((outcome) => ({ labels: { consumer, outcome }, value: counts[outcome] }))),
  );
  collectedCounter(registry, 'parley_event_fanned_out_total', 'Deliveries the fan-out of this process made from events.', () =>
    consumers().map(([consumer, counts]) => ({ labels: { consumer }, value: counts.fannedOut })),
  );

  collectedCounter(registry, 'parley_rate_limit_refusals_total', 'Requests refused by a rate limit (429), by class.', () =>
    summed(
      parts.rateLimits.refusals(),
      perApp,
      (refusal) => ({ class: refusal.cls }),
      (refusal) => refusal.count,
      (refusal) => refusal.appId,
    ),
  );
  collectedCounter(registry, 'parley_import_records_total', 'Data import records answered, by kind and result (stored, failed).', () =>
    summed(
      parts.imports.flatMap((counts) =>
        counts.stats().flatMap((row) => [
          { row, result: 'stored', count: row.stored },
          { row, result: 'failed', count: row.failed },
        ]),
      ),
      perApp,
      (entry) => ({ kind: entry.row.kind, result: entry.result }),
      (entry) => entry.count,
      (entry) => entry.row.appId,
    ),
  );

  const caches = () => [
    { cache: 'credentials', stats: parts.credentials.stats() },
    { cache: 'auth_tokens', stats: parts.tokenOwners.stats() },
    { cache: 'history_pages', stats: parts.pageCache.stats() },
  ];
  collectedCounter(registry, 'parley_cache_lookups_total', 'Cache lookups, by cache (credentials, auth_tokens, history_pages) and result (hit, miss).', () =>
    caches().flatMap(({ cache, stats }) => [
      { labels: { cache, result: 'hit' }, value: stats.hits },
      { labels: { cache, result: 'miss' }, value: stats.misses },
    ]),
  );
  collectedGauge(registry, 'parley_cache_entries', 'Entries a cache holds.', () => caches().map(({ cache, stats }) => ({ labels: { cache }, value: stats.entries })));
  collectedGauge(registry, 'parley_cache_bytes', 'Bytes the history page cache holds.', () => [{ labels: { cache: 'history_pages' }, value: parts.pageCache.stats().bytes }]);
}

/**
 * Samples of `rows` by their labels, summed over apps unless the deployment asked for per-app
 * series (an `app` label then).
 */
function summed<T>(rows: T[], perApp: boolean, labelsOf: (row: T) => Record<string, string>, amountOf: (row: T) => number, appOf: (row: T) => string): Sample[] {
  const samples = new Map<string, Sample>();
  for (const row of rows) {
    const labels = labelsOf(row);
    if (perApp) labels.app = appOf(row);
    const key = JSON.stringify(labels);
    const sample = samples.get(key);
    if (sample) sample.value += amountOf(row);
    else samples.set(key, { labels, value: amountOf(row) });
  }
  return [...samples.values()];
}

/** `consumer` with each attempt's time and result observed (parley_event_delivery_attempt_seconds). */
export function measuredConsumer(consumer: EventConsumer, metrics: Metrics): EventConsumer {
  const name = consumer.queue.consumer;
  const ok = metrics.attempts.labels(name, 'ok');
  const error = metrics.attempts.labels(name, 'error');
  return {
    queue: consumer.queue,
    limits: consumer.limits,
    retry: consumer.retry,
    attemptTimeoutMs: consumer.attemptTimeoutMs,
    close: () => consumer.close(),
    async open(appId, target) {
      const round = await consumer.open(appId, target);
      if (!round) return round;
      return {
        ...(round.prepare ? { prepare: (items) => round.prepare!(items) } : {}),
        ...(round.finish ? { finish: () => round.finish!() } : {}),
        async attempt(delivery, event) {
          const started = performance.now();
          const result = await round.attempt(delivery, event);
          (result.ok ? ok : error).observe((performance.now() - started) / 1000);
          return result;
        },
      };
    },
  };
}
