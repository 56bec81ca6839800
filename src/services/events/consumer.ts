import type { RetrySchedule } from '../../domain/webhooks.js';
import type { PendingDelivery, EventQueueRepository } from '../../repositories/events/event-queue.repository.js';
import type { RenderedEvent } from '../event-payloads.js';

/** How much of the dispatcher one consumer may use, and how its rounds go (see EventDispatcher). */
export interface ConsumerLimits {
  /**
   * Lanes of one target at once while it is unproven or slow: a slow target holds at most
   * these. Also its connections where a round posts its lanes side by side.
   */
  lanesPerTarget: number;
  /** Lanes of one target at once while it answers: every attempt of its last round succeeded within `quickAnswerMs`. */
  lanesPerAnsweringTarget: number;
  /** An answer slower than this (or a failure) puts a target back to lanesPerTarget. */
  quickAnswerMs: number;
  /** A target with no round here for this long is unproven again (and forgotten). */
  answeringForMs: number;
  /** Deliveries one lane sends before it is given back. */
  perRound: number;
  /** Events of one app read by one step of the fan-out. */
  fanOutPerApp: number;
  /**
   * How long new events wait for others before they are fanned out (and the deliveries made
   * claimed): fan-out steps of more events and rounds of more lanes, fewer statements a delivery
   * (0: at once). Where a few tens of milliseconds do not matter (a push notification).
   */
  gatherMs?: number;
  /**
   * A fan-out run still going after this long gets a second beside it, for the other apps'
   * events (fanOutRuns): where one event can make very many deliveries (a group's members).
   */
  spareFanOutAfterMs?: number;
}

/** What one attempt got: success, or a failure to retry (when `retry`) or not. */
export interface AttemptResult {
  ok: boolean;
  /** The answer's status (HTTP), or null when there was none (refused, timed out). */
  status: number | null;
  error: string | null;
  /** Whether a failure is tried again (on the consumer's schedule). */
  retry: boolean;
  /** The least wait before trying again, when the other end said (Retry-After). */
  retryAfterMs?: number;
}

/** A target opened for a round: it makes the round's attempts. */
export interface RoundTarget {
  /** Reads at once what the round's attempts need (their events rendered), before the first. */
  prepare?(items: ReadonlyArray<{ delivery: PendingDelivery; event: RenderedEvent }>): Promise<void>;
  attempt(delivery: PendingDelivery, event: RenderedEvent): Promise<AttemptResult>;
  /**
   * Writes at once what the round's attempts gathered (a log of them), after the last attempt and
   * before their outcomes are recorded. A failure is logged; the outcomes are recorded anyway.
   */
  finish?(): Promise<void>;
}

/**
 * A consumer of the event log (docs/events.md, "Consumers"): its queue (what the fan-out makes
 * of events, in SQL), how much it may do at once, when it retries, and how it makes an attempt.
 * The dispatcher does the rest: claims, leases, order within a lane, rounds, retries, the logs.
 */
export interface EventConsumer {
  readonly queue: EventQueueRepository;
  readonly limits: ConsumerLimits;
  readonly retry: RetrySchedule;
  /** The longest one attempt may take: a claim's lease outlives a round by more than two. */
  readonly attemptTimeoutMs: number;
  /** The target as it stands now, or undefined when it takes no deliveries (removed, disabled): its round fails nothing and ends. */
  open(appId: string, target: string): Promise<RoundTarget | undefined>;
  /** Lets go of what it holds (connections), at the dispatcher's stop. */
  close(): void;
}
