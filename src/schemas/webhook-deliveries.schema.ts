import { Type } from '@sinclair/typebox';
import { DELIVERY_ID_PATTERN } from '../domain/webhooks.js';
import { Data, UnixTime, UnixTimeInput } from './common.schema.js';
import { WebhookParams } from './management.schema.js';

/**
 * Parley's extensions of the vendor's webhooks (docs/webhooks.md): the delivery log, redelivery,
 * and the rotation of a webhook's signing secret.
 */

export const DeliveryParams = Type.Object({
  appId: WebhookParams.properties.appId,
  webhookId: WebhookParams.properties.webhookId,
  deliveryId: Type.String({ pattern: DELIVERY_ID_PATTERN, description: 'The delivery id (the X-Parley-Delivery header).' }),
});

export const DeliveryStatus = Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]);

export const ListDeliveriesQuery = Type.Object({
  status: Type.Optional(DeliveryStatus),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Deliveries per page, newest first (default 100).' })),
  before: Type.Optional(Type.String({ pattern: DELIVERY_ID_PATTERN, description: "Only deliveries older than this one (the previous page's meta.next.before)." })),
});

const Delivery = Type.Object({
  id: Type.String({ description: 'The delivery id: the X-Parley-Delivery header, the same on every attempt.' }),
  eventId: Type.String({ description: "The event's id in the log (the live stream's event id)." }),
  trigger: Type.String(),
  status: DeliveryStatus,
  attempts: Type.Integer({ description: 'Attempts of the current run (a redelivery starts a new run).' }),
  lastResponseCode: Type.Union([Type.Integer(), Type.Null()], { description: "The last attempt's HTTP status; null when it got none." }),
  lastAttemptAt: Type.Union([UnixTime('When the last attempt was made.'), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()], { description: 'Why the last attempt failed.' }),
  createdAt: UnixTime('When the event was fanned out to the webhook.'),
});

export const DeliveryListResponse = Type.Object({
  data: Type.Array(Delivery),
  meta: Type.Object({
    current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }),
    next: Type.Optional(Type.Object({ before: Type.String() })),
  }),
});

export const RedeliverFailedBody = Type.Object({
  since: UnixTimeInput('Redeliver every failed delivery created since then (unix seconds).'),
});

export const RedeliverResponse = Data(Type.Object({ success: Type.Boolean(), message: Type.String(), count: Type.Integer({ description: 'Deliveries made pending again.' }) }));

export const RotateSecretBody = Type.Object({
  overlapSeconds: Type.Optional(
    Type.Integer({ minimum: 0, maximum: 7 * 86_400, default: 86_400, description: 'How long the old secret keeps signing beside the new one (default a day; 0 ends it now).' }),
  ),
});

export const RotateSecretResponse = Data(
  Type.Object({
    signingSecret: Type.String({ description: 'The new signing secret: shown this once.' }),
    previousSecretExpiresAt: UnixTime('Until when deliveries also carry a signature with the old secret.'),
  }),
);
