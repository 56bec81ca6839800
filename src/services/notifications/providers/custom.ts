/**
 * The custom providers (push, SMS, e-mail): an app's own HTTPS endpoint gets the payload the
 * vendor posts to custom providers (docs/notifications.md, "Custom push provider"), one POST per recipient, and delivers it as
 * it likes. The three channels differ by the envelope's `trigger`:
 *   push:   `push-notification-payload-generated`,  data `{ to: { uid }, notificationDetails }`
 *   sms:    `sms-notification-payload-generated`,   data `{ to: { uid, phno?, name? }, messages, senderDetails?, groupDetails?, smsContent? }`
 *   email:  `email-notification-payload-generated`, data `{ to: { uid, email?, name? }, messages, senderDetails?, groupDetails?, subject? }`
 * (the trigger names and data shapes of the vendor's custom-provider pages for each channel).
 *
 * A POST is sent as a webhook delivery is: WebhookSender's HTTP (no redirects, private
 * addresses refused at connect unless the deployment allows them), signed with the webhooks'
 * `X-Parley-Signature` (verifySignature in domain/webhook-signature.ts checks it), with
 * `X-Parley-Delivery` and `X-Parley-Attempt`, and Basic auth when the provider has it. Its own
 * pool: a slow endpoint holds no webhook's connections.
 */
import type { NotificationDetails } from '../../../domain/notifications/payload.js';
import { signatureHeader } from '../../../domain/webhook-signature.js';
import { PARLEY_VERSION } from '../../../version.js';
import { WebhookSender } from '../../webhook-sender.js';
import { DEFAULT_PROVIDER_TIMEOUT_MS, isPassingStatus, type DeliveryResult, type ProviderTimeoutOptions } from './types.js';

export type CustomChannel = 'push' | 'sms' | 'email';

export const CUSTOM_TRIGGERS = {
  push: 'push-notification-payload-generated',
  sms: 'sms-notification-payload-generated',
  email: 'email-notification-payload-generated',
} as const satisfies Record<CustomChannel, string>;

/** The push payload's details (docs/notifications.md, "Custom push provider"; the vendor's CometChatNotificationDetails): a notification's, with the message and custom data. */
export type CustomNotificationDetails = Omit<NotificationDetails, 'type'> & {
  type: 'chat' | 'call';
  message?: Record<string, unknown>;
  custom?: Record<string, unknown>;
};

export interface CustomPerson {
  uid: string;
  name?: string;
  avatar?: string;
}

/** One unread message of an SMS or e-mail digest. */
export interface CustomDigestMessage {
  sender: CustomPerson;
  /** The message's text (or a description: "📷 Has shared an image"). */
  message: string;
  /** The message object, when the app's settings include it. */
  messageObject?: Record<string, unknown>;
}

export interface CustomPushData {
  to: { uid: string };
  notificationDetails: CustomNotificationDetails;
}

export interface CustomSmsData {
  to: { uid: string; phno?: string; name?: string };
  messages: CustomDigestMessage[];
  senderDetails?: CustomPerson;
  groupDetails?: { guid: string; name: string };
  /** A ready-to-send text. */
  smsContent?: string;
}

export interface CustomEmailData {
  to: { uid: string; email?: string; name?: string };
  messages: CustomDigestMessage[];
  senderDetails?: CustomPerson;
  groupDetails?: { guid: string; name: string };
  subject?: string;
}

export interface CustomDataOf {
  push: CustomPushData;
  sms: CustomSmsData;
  email: CustomEmailData;
}

/** A custom provider's settings. */
export interface CustomProviderTarget {
  url: string;
  basicAuth?: { username: string; password: string };
  /** The secrets signing each POST (X-Parley-Signature, one v1 each: two while a rotated one's overlap lasts); none: unsigned. */
  signingSecrets?: readonly string[];
}

/** Which POST this is: the notification's id (the same on every attempt) and the attempt's number (1, 2, ...). */
export interface CustomDelivery {
  id: string;
  attempt: number;
}

export interface CustomProviderClientOptions extends ProviderTimeoutOptions {
  /** PARLEY_WEBHOOK_ALLOW_PRIVATE: http URLs and private or loopback hosts are allowed. */
  allowPrivate: boolean;
  /** Connections kept to one endpoint at once. */
  connectionsPerHost?: number;
  /** Unix ms, for the signature's time. */
  now?: () => number;
}

/** WebhookSender's refusals made before connecting (and at connect, `refused: …`): settings to fix, not passing failures. */
const REFUSAL = /^(refused: |http URLs are refused|the webhook URL is not)/;

export class CustomProviderClient {
  private readonly sender: WebhookSender;
  private readonly now: () => number;

  constructor(options: CustomProviderClientOptions) {
    this.sender = new WebhookSender({
      timeoutMs: options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS,
      allowPrivate: options.allowPrivate,
      userAgent: `Parley-Notifications/${PARLEY_VERSION}`,
      connectionsPerHost: options.connectionsPerHost ?? 16,
    });
    this.now = options.now ?? Date.now;
  }

  /** Posts one payload: 2xx delivered; 429, a 5xx or no answer: retry; another status or a refused URL: failed. */
  async send<C extends CustomChannel>(target: CustomProviderTarget, channel: C, data: CustomDataOf[C], delivery: CustomDelivery): Promise<DeliveryResult> {
    const body = JSON.stringify(customEnvelope(channel, data));
    const headers: Record<string, string> = { 'x-parley-delivery': delivery.id, 'x-parley-attempt': String(delivery.attempt) };
    if (target.signingSecrets && target.signingSecrets.length > 0) {
      headers['x-parley-signature'] = signatureHeader(target.signingSecrets, Math.floor(this.now() / 1000), body);
    }
    if (target.basicAuth) {
      headers.authorization = `Basic ${Buffer.from(`${target.basicAuth.username}:${target.basicAuth.password}`).toString('base64')}`;
    }
    const sent = await this.sender.post(target.url, body, headers);
    if (sent.ok) return { outcome: 'delivered', status: sent.status, error: null };
    const error = sent.error ?? `answered HTTP ${sent.status}`;
    if (sent.status === null) return { outcome: REFUSAL.test(error) ? 'failed' : 'retry', status: null, error };
    return { outcome: isPassingStatus(sent.status) ? 'retry' : 'failed', status: sent.status, error };
  }

  close(): void {
    this.sender.close();
  }
}

/** The envelope posted: `{ trigger, data }`. */
export function customEnvelope<C extends CustomChannel>(channel: C, data: CustomDataOf[C]): { trigger: (typeof CUSTOM_TRIGGERS)[C]; data: CustomDataOf[C] } {
  return { trigger: CUSTOM_TRIGGERS[channel], data };
}
