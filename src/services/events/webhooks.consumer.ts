import { extended } from '../../domain/objects.js';
import { signatureHeader } from '../../domain/webhook-signature.js';
import type { RetrySchedule } from '../../domain/webhooks.js';
import type { PendingDelivery } from '../../repositories/events/event-queue.repository.js';
import type { WebhookDeliveriesRepository } from '../../repositories/webhook-deliveries.repository.js';
import type { WebhookRow, WebhooksRepository } from '../../repositories/webhooks.repository.js';
import type { RenderedEvent } from '../event-payloads.js';
import type { WebhookSender } from '../webhook-sender.js';
import type { AttemptResult, ConsumerLimits, EventConsumer, RoundTarget } from './consumer.js';

/**
 * The webhooks as a consumer of the event log (docs/webhooks.md): a round's target is a webhook
 * as it stands when the round begins (none while disabled or deleted); an attempt posts the
 * event's payload, signed, with the delivery's id and attempt number; a failure is retried when
 * the webhook says so.
 */
export class WebhooksConsumer implements EventConsumer {
  readonly queue: WebhookDeliveriesRepository;
  readonly limits: ConsumerLimits;
  readonly retry: RetrySchedule;
  readonly attemptTimeoutMs: number;

  constructor(
    private readonly deps: {
      deliveries: WebhookDeliveriesRepository;
      webhooks: WebhooksRepository;
      sender: WebhookSender;
      retry: RetrySchedule;
      timeoutMs: number;
      limits: ConsumerLimits;
    },
  ) {
    this.queue = deps.deliveries;
    this.limits = deps.limits;
    this.retry = deps.retry;
    this.attemptTimeoutMs = deps.timeoutMs;
  }

  async open(appId: string, webhookId: string): Promise<RoundTarget | undefined> {
    const webhook = await this.deps.webhooks.get(appId, webhookId);
    if (!webhook?.enabled) return undefined;
    return { attempt: (delivery, event) => this.attempt(webhook, delivery, event) };
  }

  close(): void {
    this.deps.sender.close();
  }

  /** Posts one delivery. */
  private async attempt(webhook: WebhookRow, delivery: PendingDelivery, event: RenderedEvent): Promise<AttemptResult> {
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
    return { ok: sent.ok, status: sent.status, error: sent.error, retry: webhook.retry_on_failure };
  }
}

/** The secrets that sign now: the webhook's, and a rotated one while its overlap lasts. */
function signingSecrets(webhook: WebhookRow, at: Date): string[] {
  const previous = webhook.previous_signing_secret;
  const until = webhook.previous_secret_expires_at;
  return previous && until && until.getTime() > at.getTime() ? [webhook.signing_secret, previous] : [webhook.signing_secret];
}
