import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AddTriggersResponse,
  AppParams,
  CreateWebhookBody,
  CreatedWebhookResponse,
  ListWebhooksQuery,
  managementErrors,
  RemoveTriggersResponse,
  TriggerListResponse,
  TriggersBody,
  UpdateWebhookBody,
  WebhookDeleteResponse,
  WebhookHeaders,
  WebhookListResponse,
  WebhookParams,
  WebhookResponse,
} from '../../../schemas/management.schema.js';
import { managementContext } from '../../plugins/management-auth.js';
import { documented, type ManagementRouteOptions } from './route-options.js';

/** The vendor's tag Webhooks: an app's webhooks and the triggers they subscribe to. */
export const managementWebhooksRoutes: FastifyPluginAsyncTypebox<ManagementRouteOptions> = async (app, options) => {
  const { webhooks } = options.services;
  const shared = documented(options, 'Webhooks');

  app.post(
    '/apps/:appId/webhooks',
    {
      schema: {
        ...shared,
        operationId: 'create-webhook',
        summary: 'Create Webhook',
        description: 'Creates a webhook in the app. The answer holds its signing secret, which is not shown again.',
        headers: WebhookHeaders,
        params: AppParams,
        body: CreateWebhookBody,
        response: { 200: CreatedWebhookResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await webhooks.create(managementContext(request, request.params.appId), request.body) }),
  );

  app.get(
    '/apps/:appId/webhooks',
    {
      schema: {
        ...shared,
        operationId: 'list-webhooks',
        summary: 'List Webhooks',
        description: "Lists the app's webhooks, oldest first.",
        headers: WebhookHeaders,
        params: AppParams,
        querystring: ListWebhooksQuery,
        response: { 200: WebhookListResponse, ...managementErrors },
      },
    },
    async (request) => webhooks.list(managementContext(request, request.params.appId), request.query),
  );

  app.get(
    '/apps/:appId/webhooks/:webhookId',
    {
      schema: {
        ...shared,
        operationId: 'get-webhook',
        summary: 'Get Webhook',
        description: 'Gets a webhook of the app.',
        headers: WebhookHeaders,
        params: WebhookParams,
        response: { 200: WebhookResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await webhooks.get(managementContext(request, request.params.appId), request.params.webhookId) }),
  );

  app.put(
    '/apps/:appId/webhooks/:webhookId',
    {
      schema: {
        ...shared,
        operationId: 'update-webhook',
        summary: 'Update Webhook',
        description: 'Changes the fields given of a webhook of the app.',
        headers: WebhookHeaders,
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await webhooks.update(managementContext(request, request.params.appId), request.params.webhookId, request.body) }),
  );

  app.delete(
    '/apps/:appId/webhooks/:webhookId',
    {
      schema: {
        ...shared,
        operationId: 'delete-webhook',
        summary: 'Delete Webhook',
        description: 'Deletes a webhook of the app.',
        headers: WebhookHeaders,
        params: WebhookParams,
        response: { 200: WebhookDeleteResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await webhooks.delete(managementContext(request, request.params.appId), request.params.webhookId) }),
  );

  app.post(
    '/apps/:appId/webhooks/:webhookId/triggers',
    {
      schema: {
        ...shared,
        operationId: 'add-triggers',
        summary: 'Add Triggers',
        description: "Subscribes a webhook to triggers: the vendor's for messages, users and groups, as list-triggers names them.",
        headers: WebhookHeaders,
        params: WebhookParams,
        body: TriggersBody,
        response: { 200: AddTriggersResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await webhooks.addTriggers(managementContext(request, request.params.appId), request.params.webhookId, request.body.triggerIds) }),
  );

  app.get(
    '/apps/:appId/webhooks/:webhookId/triggers',
    {
      schema: {
        ...shared,
        operationId: 'list-triggers',
        summary: 'List Triggers',
        description: 'Lists the triggers a webhook subscribes to.',
        headers: WebhookHeaders,
        params: WebhookParams,
        response: { 200: TriggerListResponse, ...managementErrors },
      },
    },
    async (request) => webhooks.listTriggers(managementContext(request, request.params.appId), request.params.webhookId),
  );

  app.delete(
    '/apps/:appId/webhooks/:webhookId/triggers',
    {
      schema: {
        ...shared,
        operationId: 'remove-triggers',
        summary: 'Remove Triggers',
        description: 'Unsubscribes a webhook from triggers.',
        headers: WebhookHeaders,
        params: WebhookParams,
        body: TriggersBody,
        response: { 200: RemoveTriggersResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await webhooks.removeTriggers(managementContext(request, request.params.appId), request.params.webhookId, request.body.triggerIds) }),
  );
};
