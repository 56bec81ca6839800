import type { Executor } from '../db/transaction.js';
import { DeliveryLogRepository } from './events/delivery-log.repository.js';
import { EventQueueRepository, type DeliveryRow, type DeliveryStatus } from './events/event-queue.repository.js';
import { WEBHOOKS_QUEUE } from './events/webhook-queue.js';

export type { AttemptOutcome, ClaimedLane, DeliveryRow, DeliveryStatus, PendingDelivery } from './events/event-queue.repository.js';

/**
 * The webhooks' part of the event log's queue (docs/webhooks.md): the queue's statements for the
 * webhooks consumer (WEBHOOKS_QUEUE: a target is a webhook), and its delivery log.
 */
export class WebhookDeliveriesRepository extends EventQueueRepository {
  private readonly log: DeliveryLogRepository;

  constructor(db: Executor) {
    super(db, WEBHOOKS_QUEUE);
    this.log = new DeliveryLogRepository(db, WEBHOOKS_QUEUE);
  }

  /** A page of the webhook's deliveries, newest first: those with ids below `beforeId` when given. */
  list(appId: string, webhookId: string, filter: { status?: DeliveryStatus; beforeId?: string; limit: number }, tx?: Executor): Promise<DeliveryRow[]> {
    return this.log.list(appId, webhookId, filter, tx);
  }

  get(appId: string, webhookId: string, id: string, tx?: Executor): Promise<DeliveryRow | undefined> {
    return this.log.get(appId, webhookId, id, tx);
  }

  /** Makes the one delivery, or every failed one created since a time, pending again (see DeliveryLogRepository.redeliver). */
  redeliver(appId: string, webhookId: string, which: { id: string } | { failedSince: Date }, tx?: Executor): Promise<number> {
    return this.log.redeliver(appId, webhookId, which, tx);
  }

  /** The retention of the webhooks' delivery log (see DeliveryLogRepository.deleteSettledBefore). */
  deleteSettledBefore(appId: string, cutoff: Date, batch: number, tx?: Executor): Promise<number> {
    return this.log.deleteSettledBefore(appId, cutoff, batch, tx);
  }

  /** Forgets a deleted webhook's deliveries and lanes. */
  deleteOfWebhook(appId: string, webhookId: string, tx?: Executor): Promise<void> {
    return this.deleteOfTarget(appId, webhookId, tx);
  }
}
