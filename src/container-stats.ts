import type { Database } from './db/database.js';
import { EventsRepository } from './repositories/events.repository.js';
import { StatsRepository } from './repositories/stats/stats.repository.js';
import type { EventFeed } from './services/event-feed.js';
import { StatsAggregator } from './services/stats/stats-aggregator.js';
import { StatsService } from './services/stats/stats.service.js';

/**
 * Usage statistics (docs/stats.md): the reads of the counts, on the requests' connections, and
 * the event log's aggregation into them, on the consumers' own (as the dispatcher's), from the
 * feed's safe id, gathering 250 ms of events into a step.
 */
export function createStats(database: Database, deps: { feed: EventFeed; feedPollMs: number }) {
  const stats = new StatsService({ stats: new StatsRepository(database.db) });
  const statsAggregator = new StatsAggregator({
    stats: new StatsRepository(database.consumerDb),
    events: new EventsRepository(database.consumerDb),
    feed: deps.feed,
    feedPollMs: deps.feedPollMs,
    gatherMs: 250,
  });
  return { stats, statsAggregator };
}
