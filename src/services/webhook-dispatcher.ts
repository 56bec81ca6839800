import type { Kysely } from 'kysely';
import { embeddedSessionLock, type SessionLock } from '../db/session-lock.js';
import type { DB } from '../db/schema.js';
import type { TableStatistics } from '../db/table-statistics.js';
import type { Logger } from '../domain/context.js';
import type { RetrySchedule } from '../domain/webhooks.js';
import type { WebhookDeliveriesRepository } from '../repositories/webhook-deliveries.repository.js';
import type { WebhooksRepository } from '../repositories/webhooks.repository.js';
import type { EventFeed } from './event-feed.js';
import type { EventPayloads } from './event-payloads.js';
import type { ConsumerLimits } from './events/consumer.js';
import { EventDispatcher, type DispatcherLimits } from './events/dispatcher.js';
import { WebhooksConsumer } from './events/webhooks.consumer.js';
import type { WebhookSender } from './webhook-sender.js';

/** How much one process does at once for webhooks (docs/webhooks.md). */
export const DELIVERY_LIMITS = {
  /** Lanes (a webhook's conversations) being sent at once, by all consumers of the process. */
  lanes: 1_024,
  /**
   * Lanes of one webhook at once while its endpoint is unproven or slow: a slow endpoint holds
   * at most these. Also its connections (a round posts its lanes side by side), so a webhook
   * gets at most this many deliveries per round trip of its endpoint. With 64, one webhook's
   * deliveries at 1,000 events/s over 2,000 conversations fell seconds behind
   * (docs/performance-log.md, "Webhook delivery: undici, 128 lanes per webhook").
   */
  lanesPerWebhook: 128,
  /**
   * Lanes of one webhook at once while its endpoint answers: every post of its last round
   * answered 2xx within `quickAnswerMs`. Posted over the same connections (lanesPerWebhook).
   * With many conversations each holding an event or two, a round's cost is mostly its own
   * (reads, render, the transaction that records it), and a webhook's next events wait for a
   * lane to come back: with 128, 1,000 events/s over 2,000 conversations were delivered at
   * ~1.4 times that rate, so a backlog of a second took seconds to go (docs/performance-log.md, "The latency tail found").
   */
  lanesPerAnsweringWebhook: 512,
  /** An answer slower than this (or a failure) puts a webhook back to lanesPerWebhook. */
  quickAnswerMs: 1_000,
  /** A webhook with no round here for this long is unproven again (and forgotten). */
  answeringForMs: 60_000,
  /** Deliveries one lane sends before it is given back. */
  perRound: 20,
  /** Events of one app read by one step of the fan-out. */
  fanOutPerApp: 1_000,
  /**
   * How often due lanes are looked for besides when work arrives, a round ends or one of this
   * process's retries falls due: for other processes' expired claims and retries, and lanes a
   * claim skipped while another statement held them.
   */
  claimEveryMs: 200,
  /** How often the lanes of processes that are gone (their claim lock's session ended) are taken over. */
  takeoverEveryMs: 1_000,
  /** How often a process with no webhook in its deployment looks whether one exists. */
  webhookCheckEveryMs: 1_000,
  /** How often the event log is polled for the safe id. */
  feedPollMs: 25,
};

/** The webhooks' share of DELIVERY_LIMITS, as a consumer's limits. */
export function webhookConsumerLimits(limits: typeof DELIVERY_LIMITS): ConsumerLimits {
  return {
    lanesPerTarget: limits.lanesPerWebhook,
    lanesPerAnsweringTarget: limits.lanesPerAnsweringWebhook,
    quickAnswerMs: limits.quickAnswerMs,
    answeringForMs: limits.answeringForMs,
    perRound: limits.perRound,
    fanOutPerApp: limits.fanOutPerApp,
  };
}

/** The process-wide part of DELIVERY_LIMITS, as the dispatcher's limits. */
export function dispatcherLimits(limits: typeof DELIVERY_LIMITS): DispatcherLimits {
  return {
    lanes: limits.lanes,
    claimEveryMs: limits.claimEveryMs,
    takeoverEveryMs: limits.takeoverEveryMs,
    targetCheckEveryMs: limits.webhookCheckEveryMs,
    feedPollMs: limits.feedPollMs,
  };
}

/**
 * The event dispatcher with the webhooks as its one consumer: for tools and tests that deliver
 * webhooks alone. (The server's dispatcher serves every consumer: container.ts.) Without
 * `holdLock`, its claims name a lock taken on `db` itself.
 */
export class WebhookDispatcher extends EventDispatcher {
  constructor(deps: {
    db: Kysely<DB>;
    deliveries: WebhookDeliveriesRepository;
    webhooks: WebhooksRepository;
    feed: EventFeed;
    payloads: EventPayloads;
    sender: WebhookSender;
    retry: RetrySchedule;
    timeoutMs: number;
    statistics?: TableStatistics;
    limits?: typeof DELIVERY_LIMITS;
    holdLock?: (key: bigint, log: Logger) => Promise<SessionLock>;
  }) {
    const limits = deps.limits ?? DELIVERY_LIMITS;
    super({
      db: deps.db,
      holdLock: deps.holdLock ?? ((key) => embeddedSessionLock(deps.db, key)),
      feed: deps.feed,
      payloads: deps.payloads,
      consumers: [
        new WebhooksConsumer({ deliveries: deps.deliveries, webhooks: deps.webhooks, sender: deps.sender, retry: deps.retry, timeoutMs: deps.timeoutMs, limits: webhookConsumerLimits(limits) }),
      ],
      limits: dispatcherLimits(limits),
      ...(deps.statistics ? { statistics: deps.statistics } : {}),
    });
  }
}
