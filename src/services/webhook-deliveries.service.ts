import type { RequestContext } from '../domain/context.js';
import { AppError, badRequest } from '../domain/errors.js';
import { toUnix } from '../domain/time.js';
import { isDeliveryId } from '../domain/webhooks.js';
import type { DeliveryRow, DeliveryStatus, WebhookDeliveriesRepository } from '../repositories/webhook-deliveries.repository.js';
import type { WebhooksService } from './webhooks.service.js';

/** A delivery as the delivery log answers it (docs/webhooks.md). */
export interface Delivery {
  id: string;
  eventId: string;
  trigger: string;
  status: DeliveryStatus;
  attempts: number;
  lastResponseCode: number | null;
  lastAttemptAt: number | null;
  lastError: string | null;
  createdAt: number;
}

/**
 * A webhook's delivery log and redelivery (Parley extensions of the vendor's management API;
 * docs/webhooks.md). The webhook is found as the vendor's operations find it: another app's
 * webhook is not found.
 */
export class WebhookDeliveriesService {
  constructor(private readonly deps: { webhooks: WebhooksService; deliveries: WebhookDeliveriesRepository }) {}

  /** The webhook's deliveries, newest first, a page at a time (`before` is the previous page's `meta.next.before`). */
  async list(
    ctx: RequestContext,
    webhookId: string,
    query: { status?: DeliveryStatus; limit?: number; before?: string },
  ): Promise<{ data: Delivery[]; meta: { current: { limit: number; count: number }; next?: { before: string } } }> {
    const webhook = await this.deps.webhooks.findRow(ctx, webhookId);
    if (query.before !== undefined && !isDeliveryId(query.before)) throw badRequest({ before: 'must be a delivery id' });
    const limit = query.limit ?? 100;
    const rows = await this.deps.deliveries.list(webhook.app_id, webhook.id, { status: query.status, beforeId: query.before, limit });
    const meta: { current: { limit: number; count: number }; next?: { before: string } } = { current: { limit, count: rows.length } };
    if (rows.length === limit) meta.next = { before: rows[rows.length - 1]!.id };
    return { data: rows.map(toDelivery), meta };
  }

  /**
   * Delivers one delivery again, whatever its status, with the same id (a new run of attempts),
   * at once (a lane waiting for a retry is made due now, unless a process is sending it).
   */
  async redeliver(ctx: RequestContext, webhookId: string, deliveryId: string): Promise<{ success: true; message: string; count: number }> {
    const webhook = await this.deps.webhooks.findRow(ctx, webhookId);
    // Anything but a delivery id's form names none.
    const count = isDeliveryId(deliveryId) ? await this.deps.deliveries.redeliver(webhook.app_id, webhook.id, { id: deliveryId }) : 0;
    if (count === 0) throw new AppError('ERR_DELIVERY_NOT_FOUND', { params: { id: deliveryId, webhookId: webhook.id } });
    return { success: true, message: `The delivery ${deliveryId} will be delivered again.`, count };
  }

  /** Delivers again every failed delivery created since `since` (unix seconds). */
  async redeliverFailed(ctx: RequestContext, webhookId: string, since: number): Promise<{ success: true; message: string; count: number }> {
    const webhook = await this.deps.webhooks.findRow(ctx, webhookId);
    const count = await this.deps.deliveries.redeliver(webhook.app_id, webhook.id, { failedSince: new Date(since * 1000) });
    return { success: true, message: `${count} failed deliveries will be delivered again.`, count };
  }
}

function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    eventId: row.event_id,
    trigger: row.trigger,
    status: row.status,
    attempts: row.attempts,
    lastResponseCode: row.last_status,
    lastAttemptAt: row.last_attempt_at ? toUnix(row.last_attempt_at) : null,
    lastError: row.last_error,
    createdAt: toUnix(row.created_at),
  };
}
