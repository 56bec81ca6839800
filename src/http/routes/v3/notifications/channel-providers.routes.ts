import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import type { Services } from '../../../../container.js';
import { CUSTOM_PROVIDER_CHANNELS, type CustomProviderChannel } from '../../../../domain/notifications/channel-providers.js';
import { errorResponses } from '../../../../schemas/common.schema.js';
import {
  EmailCustomProviderResponse,
  ProviderDeletedResponse,
  PushCustomProviderResponse,
  SaveSendGridBody,
  SaveTwilioBody,
  SendGridResponse,
  SmsCustomProviderResponse,
  TwilioResponse,
  UpdateSendGridBody,
  UpdateTwilioBody,
  saveCustomBody,
  updateCustomBody,
} from '../../../../schemas/notification-channel-providers.schema.js';
import type { CustomProviderInput, CustomProviderView } from '../../../../services/notifications/channel-providers.service.js';

/**
 * The app's SMS and e-mail providers (Twilio, SendGrid) and its custom providers, one per channel
 * (docs/notifications.md): `/v3/notifications/{sms|email|push}/v1/providers/...`. POST saves the
 * provider whole (creating or replacing it), PUT changes the fields given of the one saved.
 */
export const channelProvidersRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const providers = services.channelProviders;
  const tags = ['Notifications'];
  const secretNote = 'Secrets are stored sealed and answered masked; a masked value sent back keeps the stored secret.';

  // -- Twilio (SMS) --
  const twilio = '/notifications/sms/v1/providers/twilio';
  app.get(
    twilio,
    {
      schema: {
        operationId: 'notifications-sms-list-twilio-details',
        tags,
        summary: 'Get Twilio credentials',
        description: "Fetches the app's Twilio account, its auth token masked. ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved.",
        response: { 200: TwilioResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.getTwilio(request.ctx) }),
  );
  app.post(
    twilio,
    {
      schema: {
        operationId: 'notifications-sms-save-twilio-details',
        tags,
        summary: 'Save Twilio credentials',
        description: `Saves the app's Twilio account, replacing the one saved before (fields not given take their defaults). ${secretNote}`,
        body: SaveTwilioBody,
        response: { 200: TwilioResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.saveTwilio(request.ctx, request.body) }),
  );
  app.put(
    twilio,
    {
      schema: {
        operationId: 'notifications-sms-update-twilio-details',
        tags,
        summary: 'Update Twilio credentials',
        description: `Changes the fields given of the app's Twilio account. ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved. ${secretNote}`,
        body: UpdateTwilioBody,
        response: { 200: TwilioResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.updateTwilio(request.ctx, request.body) }),
  );
  app.delete(
    twilio,
    {
      schema: {
        operationId: 'notifications-sms-delete-twilio-details',
        tags,
        summary: 'Delete Twilio credentials',
        description: "Deletes the app's Twilio account. ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved.",
        response: { 200: ProviderDeletedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.deleteTwilio(request.ctx) }),
  );

  // -- SendGrid (e-mail) --
  const sendGrid = '/notifications/email/v1/providers/sendgrid';
  app.get(
    sendGrid,
    {
      schema: {
        operationId: 'notifications-email-list-sendgrid-details',
        tags,
        summary: 'Get SendGrid credentials',
        description: "Fetches the app's SendGrid account, its API key masked. ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved.",
        response: { 200: SendGridResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.getSendGrid(request.ctx) }),
  );
  app.post(
    sendGrid,
    {
      schema: {
        operationId: 'notifications-email-save-sendgrid-details',
        tags,
        summary: 'Save SendGrid credentials',
        description: `Saves the app's SendGrid account, replacing the one saved before (fields not given take their defaults). ${secretNote}`,
        body: SaveSendGridBody,
        response: { 200: SendGridResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.saveSendGrid(request.ctx, request.body) }),
  );
  app.put(
    sendGrid,
    {
      schema: {
        operationId: 'notifications-email-update-sendgrid-details',
        tags,
        summary: 'Update SendGrid credentials',
        description: `Changes the fields given of the app's SendGrid account. ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved. ${secretNote}`,
        body: UpdateSendGridBody,
        response: { 200: SendGridResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.updateSendGrid(request.ctx, request.body) }),
  );
  app.delete(
    sendGrid,
    {
      schema: {
        operationId: 'notifications-email-delete-sendgrid-details',
        tags,
        summary: 'Delete SendGrid credentials',
        description: "Deletes the app's SendGrid account. ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved.",
        response: { 200: ProviderDeletedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.deleteSendGrid(request.ctx) }),
  );

  // -- Custom providers (push, SMS, e-mail): one implementation, the vendor's names per channel --
  for (const channel of CUSTOM_PROVIDER_CHANNELS) {
    const path = `/notifications/${channel}/v1/providers/custom`;
    const name = CHANNEL_NAMES[channel];
    // Typed loosely: the loop serves three response shapes (each still serialises by its own schema).
    const response: TSchema = CUSTOM_RESPONSES[channel];
    // Push answers a list (the vendor's `pushProviders`), the others the provider itself.
    const answer = (view: CustomProviderView | undefined) => (channel === 'push' ? { pushProviders: view ? [view] : [] } : view!);
    const missing = channel === 'push' ? 'An app with none lists none.' : 'ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved.';
    app.get(
      path,
      {
        schema: {
          operationId: `notifications-list-${channel}-custom-provider`,
          tags,
          summary: `Get Custom Provider for ${name} Notifications`,
          description: `Fetches the app's custom provider for ${name} notifications, its password masked. ${missing}`,
          response: { 200: response, ...errorResponses },
        },
      },
      async (request) => ({
        data: answer(channel === 'push' ? await providers.findCustom(request.ctx, channel) : await providers.getCustom(request.ctx, channel)),
      }),
    );
    app.post(
      path,
      {
        schema: {
          operationId: `notifications-save-${channel}-custom-provider`,
          tags,
          summary: `Save Custom Provider for ${name} Notifications`,
          description:
            `Saves the app's custom provider for ${name} notifications (a webhook, with optional Basic auth), replacing the one saved before ` +
            `(fields not given take their defaults). ${secretNote}`,
          body: saveCustomBody(channel),
          response: { 200: response, ...errorResponses },
        },
      },
      async (request) => ({ data: answer(await providers.saveCustom(request.ctx, channel, request.body as CustomProviderInput)) }),
    );
    app.put(
      path,
      {
        schema: {
          operationId: `notifications-update-${channel}-custom-provider`,
          tags,
          summary: `Update Custom Provider for ${name} Notifications`,
          description: `Changes the fields given of the app's custom provider for ${name} notifications. ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved. ${secretNote}`,
          body: updateCustomBody(channel),
          response: { 200: response, ...errorResponses },
        },
      },
      async (request) => ({ data: answer(await providers.updateCustom(request.ctx, channel, request.body as CustomProviderInput)) }),
    );
    app.delete(
      path,
      {
        schema: {
          operationId: `notifications-delete-${channel}-custom-provider`,
          tags,
          summary: `Delete the Custom Provider for ${name} Notifications`,
          description: `Deletes the app's custom provider for ${name} notifications. ERR_NOTIFICATION_PROVIDER_NOT_FOUND when none is saved.`,
          response: { 200: ProviderDeletedResponse, ...errorResponses },
        },
      },
      async (request) => ({ data: await providers.deleteCustom(request.ctx, channel) }),
    );
  }
};

const CHANNEL_NAMES: Record<CustomProviderChannel, string> = { push: 'Push', sms: 'SMS', email: 'Email' };

const CUSTOM_RESPONSES = { push: PushCustomProviderResponse, sms: SmsCustomProviderResponse, email: EmailCustomProviderResponse } as const;
