import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import { silentLogger, type Logger } from '../domain/context.js';
import { extended } from '../domain/objects.js';
import { signatureHeader } from '../domain/webhook-signature.js';
import { nextRetryAt, type RetrySchedule } from '../domain/webhooks.js';
import type { AttemptOutcome, PendingDelivery, WebhookDeliveriesRepository } from '../repositories/webhook-deliveries.repository.js';
import type { WebhookRow, WebhooksRepository } from '../repositories/webhooks.repository.js';
import type { EventFeed } from './event-feed.js';
import type { EventPayloads, RenderedEvent } from './event-payloads.js';
import type { TableStatistics } from '../db/table-statistics.js';
import type { WebhookSender } from './webhook-sender.js';

/** How much one process does at once (docs/webhooks.md). */
export const DELIVERY_LIMITS = {
  /** Lanes (a webhook's conversations) being sent at once. */
  lanes: 1_024,
  /**
   * Lanes of one webhook at once while its endpoint is unproven or slow: a slow endpoint holds
   * at most these. Also its connections (a round posts its lanes side by side), so a webhook
   * gets at most this many deliveries per round trip of its endpoint. With 64, one webhook's
   * deliveries at 1,000 events/s over 2,000 conversations fell seconds behind
   * (docs/performance.md).
   */
  lanesPerWebhook: 128,
  /**
   * Lanes of one webhook at once while its endpoint answers: every post of its last round
   * answered 2xx within `quickAnswerMs`. Posted over the same connections (lanesPerWebhook).
   * With many conversations each holding an event or two, a round's cost is mostly its own
   * (reads, render, the transaction that records it), and a webhook's next events wait for a
   * lane to come back: with 128, 1,000 events/s over 2,000 conversations were delivered at
   * ~1.4 times that rate, so a backlog of a second took seconds to go (docs/performance.md).
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
  /** How often a process with no webhook in its deployment looks whether one exists. */
  webhookCheckEveryMs: 1_000,
  /** How often the event log is polled for the safe id. */
  feedPollMs: 25,
};

/**
 * Delivers the event log to webhooks (docs/webhooks.md). Each time the feed's safe id moves,
 * the fan-out turns the new events into deliveries (one process per app's stretch, through the
 * cursor's row lock). Then due lanes are claimed with a lease, and each lane's deliveries are
 * posted in event order: a failure with retries on holds the lane until its retry time, so a
 * conversation's order is kept; a failure without them (or past the horizon) fails the delivery
 * and the lane goes on. Another process takes over a lane whose lease ended.
 */
export class WebhookDispatcher {
  /** This process's claim on the lanes it sends. */
  private readonly claim = crypto.randomUUID();
  private readonly leaseMs: number;
  private readonly limits: typeof DELIVERY_LIMITS;
  /** Lanes in flight here, per webhook (keyed by app id and webhook id). */
  private readonly busy = new Map<string, { appId: string; webhookId: string; lanes: number }>();
  /**
   * The webhooks whose last round here, within answeringForMs, had every post answered 2xx
   * within quickAnswerMs (keyed as `busy`), with when that round ended.
   */
  private readonly answering = new Map<string, { appId: string; webhookId: string; at: number }>();
  private lanesInFlight = 0;
  private readonly running = new Set<Promise<void>>();
  private safe: bigint | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private listening = false;
  private feeding = false;
  private lastWebhookCheck = 0;
  private log: Logger = silentLogger;

  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      deliveries: WebhookDeliveriesRepository;
      webhooks: WebhooksRepository;
      feed: EventFeed;
      payloads: EventPayloads;
      sender: WebhookSender;
      retry: RetrySchedule;
      timeoutMs: number;
      /** Told of every delivery the fan-out makes: keeps the queue's statistics current. */
      statistics?: TableStatistics;
      /** How much it does at once (DELIVERY_LIMITS unless given). */
      limits?: typeof DELIVERY_LIMITS;
    },
  ) {
    this.limits = deps.limits ?? DELIVERY_LIMITS;
    // A claim outlives a lane's round: the round stops starting posts before the lease's last two timeouts.
    this.leaseMs = Math.max(4 * deps.timeoutMs, 2_000);
  }

  /** Starts delivering (the server does; tests that deliver do). */
  start(log: Logger): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.log = log;
    if (!this.listening) {
      this.listening = true;
      this.deps.feed.onAdvance((safe) => {
        this.safe = safe;
        this.fanOut();
      });
    }
    // Nothing is read while the deployment has never had a webhook (an idle server stays idle);
    // once one exists, the fan-out starts from its app's cursor, so nothing is missed meanwhile.
    this.timer = setInterval(() => void this.tick(), this.limits.claimEveryMs);
    this.timer.unref();
    void this.tick();
  }

  /** The periodic look: start the feed once a webhook exists (looked for every second), then claim due lanes. */
  private async tick(): Promise<void> {
    if (!this.feeding) {
      const now = Date.now();
      if (now - this.lastWebhookCheck < this.limits.webhookCheckEveryMs) return;
      this.lastWebhookCheck = now;
      try {
        if (this.stopped || !(await this.deps.deliveries.anyCursor())) return;
      } catch (error) {
        this.log.warn({ err: error }, 'the webhook dispatcher could not read the database');
        return;
      }
      if (this.stopped) return;
      this.feeding = true;
      this.deps.feed.start(this.limits.feedPollMs, this.log);
    }
    this.claimRound();
  }

  /** Stops: no new work; posts in flight end (within the timeout) and their lanes are given back. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    await this.fanOut.idle();
    await this.claimRound.idle();
    await Promise.all(this.running);
    await this.deps.statistics?.idle();
    this.deps.sender.close();
  }

  /** Turns the events up to the safe id into deliveries, step after step while an app has more. */
  private readonly fanOut = oneAtATime(
    async () => {
      const safe = this.safe;
      if (safe === undefined) return;
      for (;;) {
        const step = await this.deps.deliveries.fanOut(String(safe), this.limits.fanOutPerApp);
        if (step.deliveries > 0) {
          this.claimRound();
          this.deps.statistics?.noteWritten(step.deliveries, this.log);
        }
        if (!step.more || this.stopped) return;
      }
    },
    () => this.stopped,
    (error) => this.log.warn({ err: error }, 'the webhook fan-out failed; it is tried again with the next events'),
  );

  /** Claims due lanes while this process has room, and sends each. */
  private readonly claimRound = oneAtATime(
    async () => {
      const room = this.limits.lanes - this.lanesInFlight;
      if (room <= 0) return;
      // Each webhook's share: larger while its endpoint answers, less what it has in flight.
      const shares = new Map<string, { appId: string; webhookId: string; lanes: number; share: number }>();
      const since = Date.now() - this.limits.answeringForMs;
      for (const [key, { appId, webhookId, at }] of this.answering) {
        if (at < since) this.answering.delete(key);
        else shares.set(key, { appId, webhookId, lanes: 0, share: this.limits.lanesPerAnsweringWebhook });
      }
      for (const [key, { appId, webhookId, lanes }] of this.busy) {
        shares.set(key, { appId, webhookId, lanes, share: shares.get(key)?.share ?? this.limits.lanesPerWebhook });
      }
      const lanes = await this.deps.deliveries.claimLanes({
        claim: this.claim,
        perWebhook: this.limits.lanesPerWebhook,
        total: room,
        leaseMs: this.leaseMs,
        inFlight: [...shares.values()].map((s) => [s.appId, s.webhookId, s.lanes, s.share] as const),
      });
      // A round per webhook: its lanes' deliveries read, rendered and recorded together.
      const byWebhook = new Map<string, { appId: string; webhookId: string; lanes: string[] }>();
      for (const lane of lanes) {
        const key = webhookKey(lane.app_id, lane.webhook_id);
        const group = byWebhook.get(key);
        if (group) group.lanes.push(lane.lane);
        else byWebhook.set(key, { appId: lane.app_id, webhookId: lane.webhook_id, lanes: [lane.lane] });
      }
      for (const group of byWebhook.values()) this.runRound(group.appId, group.webhookId, group.lanes);
    },
    () => this.stopped,
    (error) => this.log.warn({ err: error }, 'claiming webhook deliveries failed'),
  );

  private runRound(appId: string, webhookId: string, lanes: string[]): void {
    const key = webhookKey(appId, webhookId);
    const busy = this.busy.get(key) ?? { appId, webhookId, lanes: 0 };
    busy.lanes += lanes.length;
    this.busy.set(key, busy);
    this.lanesInFlight += lanes.length;
    const run: Promise<void> = this.sendRound(appId, webhookId, lanes)
      .catch((error: unknown) => this.log.warn({ err: error, webhook: webhookId }, 'a webhook delivery round failed; its lanes are retried when their claim ends'))
      .finally(() => {
        busy.lanes -= lanes.length;
        if (busy.lanes <= 0) this.busy.delete(key);
        this.lanesInFlight -= lanes.length;
        this.running.delete(run);
        this.claimRound();
      });
    this.running.add(run);
  }

  /**
   * One round of a webhook's lanes: their pending deliveries read and rendered together, each
   * lane's posted in order (the lanes side by side) until one waits for a retry, the budget ends
   * or the dispatcher stops; then every outcome recorded and the lanes given back in one
   * transaction.
   */
  private async sendRound(appId: string, webhookId: string, lanes: string[]): Promise<void> {
    const started = Date.now();
    const outcomes: AttemptOutcome[] = [];
    const retryAt = new Map<string, Date>();
    // Per lane, the last event settled (or, when a lane stopped early, the one before the first left).
    const after = new Map<string, string>();
    const webhook = await this.deps.webhooks.get(appId, webhookId);
    // Whether every post of this round was answered 2xx within quickAnswerMs (see `answering`).
    let attempted = 0;
    let answered = true;
    if (!webhook?.enabled) this.answering.delete(webhookKey(appId, webhookId));
    else {
      const pending = await this.deps.deliveries.pendingOfLanes(appId, webhookId, lanes, this.limits.perRound);
      const events = [...pending.values()].flatMap((list) => list.flatMap((p) => (p.event ? [p.event] : [])));
      const rendered = new Map<string, RenderedEvent>();
      for (const event of await this.deps.payloads.render(events)) rendered.set(event.id, event);
      await Promise.all(
        [...pending].map(async ([lane, deliveries]) => {
          for (const delivery of deliveries) {
            if (this.stopped || Date.now() - started > this.leaseMs - 2 * this.deps.timeoutMs) return;
            // Settled below, or left pending for a retry: either way nothing before it is pending.
            after.set(lane, String(BigInt(delivery.event_id) - 1n));
            const event = rendered.get(delivery.event_id);
            if (!event) {
              const error = delivery.event ? "the event's message no longer exists" : 'the event is no longer in the log (retention)';
              outcomes.push({ id: delivery.id, status: 'failed', attempted: false, at: new Date(), httpStatus: null, error });
              after.set(lane, delivery.event_id);
              continue;
            }
            const posted = Date.now();
            const outcome = await this.attempt(webhook, delivery, event);
            attempted++;
            if (outcome.result.status !== 'delivered' || Date.now() - posted > this.limits.quickAnswerMs) answered = false;
            outcomes.push(outcome.result);
            if (outcome.retryAt) {
              retryAt.set(lane, outcome.retryAt);
              return;
            }
            after.set(lane, delivery.event_id);
          }
        }),
      );
    }
    if (attempted > 0) {
      if (answered) this.answering.set(webhookKey(appId, webhookId), { appId, webhookId, at: Date.now() });
      else this.answering.delete(webhookKey(appId, webhookId));
    }
    await withTransaction(
      this.deps.db,
      'webhook_round',
      (tx) => this.deps.deliveries.finishRound(appId, webhookId, lanes, this.claim, outcomes, retryAt, after, tx),
      this.log,
    );
    // Its lanes that wait for a retry are looked for again when the first falls due.
    if (retryAt.size > 0) {
      const first = Math.min(...[...retryAt.values()].map((at) => at.getTime()));
      setTimeout(() => this.claimRound(), Math.max(0, first - Date.now()) + 5).unref();
    }
  }

  /** Posts one delivery: delivered, retried later (the lane waits), or failed. */
  private async attempt(webhook: WebhookRow, delivery: PendingDelivery, event: RenderedEvent): Promise<{ result: AttemptOutcome; retryAt?: Date }> {
    const at = new Date();
    const body = JSON.stringify(extended(event.payload, { webhook: webhook.id }));
    const headers: Record<string, string> = {
      'x-parley-signature': signatureHeader(signingSecrets(webhook, at), Math.floor(at.getTime() / 1000), body),
      'x-parley-delivery': delivery.id,
      'x-parley-attempt': String(delivery.attempts + 1),
    };
    if (webhook.use_basic_auth) {
      headers.authorization = `Basic ${Buffer.from(`${webhook.username ?? ''}:${webhook.password ?? ''}`).toString('base64')}`;
    }
    const sent = await this.deps.sender.post(webhook.url, body, headers);
    const result: AttemptOutcome = { id: delivery.id, status: 'delivered', attempted: true, at, httpStatus: sent.status, error: sent.error };
    if (sent.ok) return { result };
    const retryAt = webhook.retry_on_failure ? nextRetryAt(this.deps.retry, delivery.attempts + 1, delivery.first_attempt_at ?? at, new Date()) : undefined;
    result.status = retryAt ? 'pending' : 'failed';
    return retryAt ? { result, retryAt } : { result };
  }
}

/** The secrets that sign now: the webhook's, and a rotated one while its overlap lasts. */
function signingSecrets(webhook: WebhookRow, at: Date): string[] {
  const previous = webhook.previous_signing_secret;
  const until = webhook.previous_secret_expires_at;
  return previous && until && until.getTime() > at.getTime() ? [webhook.signing_secret, previous] : [webhook.signing_secret];
}

/**
 * `work` run one at a time, never after `stopped`: a call while it runs makes it run once more
 * when it ends (the events or lanes it would look for may have arrived meanwhile). A failure is
 * reported and the next call runs it again.
 */
function oneAtATime(work: () => Promise<void>, stopped: () => boolean, failed: (error: unknown) => void): { (): void; idle(): Promise<void> } {
  let running: Promise<void> | undefined;
  let again = false;
  const run = () => {
    if (stopped()) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await work();
        } while (again && !stopped());
      } catch (error) {
        failed(error);
      } finally {
        // In the same tick as the last look at `again`: a call after it starts a new run, one
        // before it made this one go round again. (Cleared in a .finally() instead, a call in
        // between was lost, and lanes waited for the periodic claim.)
        running = undefined;
      }
    })();
  };
  return Object.assign(run, { idle: async () => void (await running) });
}

function webhookKey(appId: string, webhookId: string): string {
  return `${appId}\u0000${webhookId}`;
}
