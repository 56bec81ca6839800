import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { managementErrors, WebhookHeaders, WebhookParams } from '../../../schemas/management.schema.js';
import {
  DeliveryListResponse,
  DeliveryParams,
  ListDeliveriesQuery,
  RedeliverFailedBody,
  RedeliverResponse,
  RotateSecretBody,
  RotateSecretResponse,
} from '../../../schemas/webhook-deliveries.schema.js';
import { managementContext } from '../../plugins/management-auth.js';
import { documented, type ManagementRouteOptions } from './route-options.js';

/** Parley's extensions of the vendor's webhooks (docs/webhooks.md): the delivery log, redelivery, secret rotation. */
export const managementWebhookDeliveriesRoutes: FastifyPluginAsyncTypebox<ManagementRouteOptions> = async (app, options) => {
  const { webhooks, webhookDeliveries } = options.services;
  const shared = documented(options, 'Webhook deliveries (Parley)');

  app.get(
    '/apps/:appId/webhooks/:webhookId/deliveries',
    {
      schema: {
        ...shared,
        operationId: 'list-webhook-deliveries',
        summary: 'List Deliveries',
        description: "Lists the webhook's deliveries, newest first, with their status, attempts and last answer.",
        headers: WebhookHeaders,
        params: WebhookParams,
        querystring: ListDeliveriesQuery,
        response: { 200: DeliveryListResponse, ...managementErrors },
      },
    },
    async (request) => webhookDeliveries.list(managementContext(request, request.params.appId), request.params.webhookId, request.query),
  );

  app.post(
    '/apps/:appId/webhooks/:webhookId/deliveries/:deliveryId/redeliver',
    {
      schema: {
        ...shared,
        operationId: 'redeliver-webhook-delivery',
        summary: 'Redeliver',
        description: 'Delivers one delivery again, whatever its status, with the same X-Parley-Delivery id.',
        headers: WebhookHeaders,
        params: DeliveryParams,
        response: { 200: RedeliverResponse, ...managementErrors },
      },
    },
    async (request) => ({
      data: await webhookDeliveries.redeliver(managementContext(request, request.params.appId), request.params.webhookId, request.params.deliveryId),
    }),
  );

  app.post(
    '/apps/:appId/webhooks/:webhookId/deliveries/redeliver',
    {
      schema: {
        ...shared,
        operationId: 'redeliver-failed-webhook-deliveries',
        summary: 'Redeliver Failed',
        description: 'Delivers again every failed delivery created since `since` (unix seconds).',
        headers: WebhookHeaders,
        params: WebhookParams,
        body: RedeliverFailedBody,
        response: { 200: RedeliverResponse, ...managementErrors },
      },
    },
    async (request) => ({
      data: await webhookDeliveries.redeliverFailed(managementContext(request, request.params.appId), request.params.webhookId, request.body.since),
    }),
  );

  app.post(
    '/apps/:appId/webhooks/:webhookId/signing-secret',
    {
      schema: {
        ...shared,
        operationId: 'rotate-webhook-signing-secret',
        summary: 'Rotate Signing Secret',
        description: 'Makes a new signing secret (shown this once); the old one keeps signing beside it for `overlapSeconds`.',
        headers: WebhookHeaders,
        params: WebhookParams,
        body: RotateSecretBody,
        response: { 200: RotateSecretResponse, ...managementErrors },
      },
    },
    async (request) => ({
      data: await webhooks.rotateSecret(managementContext(request, request.params.appId), request.params.webhookId, request.body.overlapSeconds),
    }),
  );
};
