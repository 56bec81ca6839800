import { Type } from '@sinclair/typebox';
import { WEBHOOK_LIMITS } from '../domain/webhooks.js';
import { Data, DataWithMeta, ErrorResponse, PaginationMeta, SuccessMessage, UnixTime } from './common.schema.js';

/**
 * The vendor's management API (cometchat-management-apis.json, tags App, Settings and Webhooks):
 * bodies, queries and answers. The `key` and `secret` headers are checked before validation
 * (http/plugins/management-auth.ts); they are listed here for the API reference.
 */

export const ManagementHeaders = Type.Object({
  key: Type.String({ description: 'The key of a management credential of the deployment (parley admin keys create).' }),
  secret: Type.String({ description: 'Its secret.' }),
});

export const WebhookHeaders = Type.Object({
  key: ManagementHeaders.properties.key,
  secret: ManagementHeaders.properties.secret,
  'x-webhook-version': Type.Optional(Type.Integer({ description: "Accepted and ignored: Parley's webhooks are the vendor's new webhooks (version 2) whatever it says." })),
});

/** Error statuses of the management routes. */
export const managementErrors = { 400: ErrorResponse, 401: ErrorResponse, 403: ErrorResponse, 404: ErrorResponse, 413: ErrorResponse, 415: ErrorResponse } as const;

export const AppParams = Type.Object({
  appId: Type.String({ minLength: 1, maxLength: 100, description: 'The app id.' }),
});

export const WebhookParams = Type.Object({
  appId: AppParams.properties.appId,
  webhookId: Type.String({ minLength: 1, maxLength: 100, description: 'The webhook id.' }),
});

// --- apps ----------------------------------------------------------------------------------

const AppKey = Type.Object({
  apiKey: Type.String({ description: 'The key: in plain text in the create-app answer only, masked in list-apps.' }),
  name: Type.String(),
  scope: Type.Union([Type.Literal('fullAccess'), Type.Literal('authOnly')]),
  createdBy: Type.Optional(Type.String({ description: '`app_system` for the two keys create-app makes.' })),
});

export const ManagedApp = Type.Object(
  {
    id: Type.String({ description: 'The app id.' }),
    name: Type.String(),
    region: Type.String(),
    state: Type.Union([Type.Literal('active'), Type.Literal('deleting')], { description: '`deleting` while a delete that began has not finished.' }),
    createdAt: UnixTime('Unix seconds.'),
    appRegion: Type.Object({ id: Type.String(), name: Type.String(), description: Type.String() }),
    apiKeys: Type.Record(Type.String(), AppKey, { description: "The app's API keys, by key." }),
  },
  { description: 'An app.' },
);

export const CreateAppBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, description: 'Name of the app.' }),
  region: Type.Union([Type.Literal('us'), Type.Literal('eu'), Type.Literal('in')], {
    description: "Region of the app: the deployment's region (PARLEY_REGION); a deployment serves one.",
  }),
  version: Type.Optional(Type.String({ maxLength: 10, description: 'Version of the app: "3".' })),
  skipSampleData: Type.Optional(Type.Boolean({ description: 'Accepted: Parley never adds sample data.' })),
});

export const ListAppsQuery = Type.Object({
  searchKey: Type.Optional(Type.String({ maxLength: 100, description: 'Part of the app id or name, any case.' })),
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 25, description: 'Apps per page (default 25, at most 1,000).' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' })),
});

export const AppResponse = Data(ManagedApp);
export const AppListResponse = DataWithMeta(Type.Array(ManagedApp), PaginationMeta);
export const DeleteAppResponse = Data(Type.Object({ success: Type.Boolean(), scheduledToDeleteAt: UnixTime('When the app was deleted (unix seconds): Parley deletes it at once.') }));

export const UsageBody = Type.Object({
  usePreviousBillingCycle: Type.Optional(Type.Boolean({ description: 'The previous calendar month (UTC) instead of the current one so far.' })),
});

export const UsageResponse = Data(
  Type.Object({
    success: Type.Boolean(),
    message: Type.String(),
    usage: Type.Object(
      {
        from: UnixTime('Start of the period (unix seconds).'),
        to: UnixTime('End of the period (unix seconds), excluded.'),
        newUsers: Type.Integer({ description: 'Users created in the period (and not deleted since).' }),
        newGroups: Type.Integer({ description: 'Groups created in the period (and not deleted since).' }),
        messages: Type.Integer({ description: 'Messages sent in the period, action messages aside (and not permanently deleted since).' }),
      },
      { description: 'Parley extension: the figures the vendor e-mails.' },
    ),
  }),
);

// --- settings ------------------------------------------------------------------------------

export const MapSettingsBody = Type.Object({
  settings: Type.Optional(Type.Record(Type.String(), Type.Boolean(), { maxProperties: 100, description: 'Setting keys and their values (at most 100 per call).' })),
});

export const UnmapSettingsBody = Type.Object({
  settings: Type.Optional(
    Type.Union([Type.Array(Type.String({ maxLength: 100 }), { maxItems: 500 }), Type.Record(Type.String(), Type.Unknown(), { maxProperties: 500 })], {
      description: 'The keys to unmap (a list, or an object whose keys are they); without it, every setting of the app.',
    }),
  ),
});

export const MapSettingsResponse = Data(Type.Record(Type.String(), SuccessMessage, { description: 'Per setting key.' }));
export const ListSettingsResponse = Data(Type.Record(Type.String(), Type.Boolean(), { description: "The app's settings, by key." }));
export const UnmapSettingsResponse = Data(SuccessMessage);

// --- webhooks ------------------------------------------------------------------------------

const WebhookFields = {
  id: Type.String({ description: 'Id of the webhook.' }),
  name: Type.String({ description: 'Name of the webhook.' }),
  webhookURL: Type.String({ description: 'Where deliveries are sent.' }),
  useBasicAuth: Type.Boolean({ description: 'Whether deliveries carry HTTP Basic auth.' }),
  username: Type.Optional(Type.String({ description: 'The Basic auth user name (the password is never shown).' })),
  enabled: Type.Boolean(),
  retryOnFailure: Type.Boolean(),
  createdAt: UnixTime('Unix seconds.'),
  updatedAt: UnixTime('Unix seconds.'),
};

export const Webhook = Type.Object(WebhookFields, { description: 'A webhook.' });
export const CreatedWebhook = Type.Object(
  {
    ...WebhookFields,
    signingSecret: Type.String({ description: 'Parley extension: signs the deliveries (HMAC-SHA256). Shown here only: keep it.' }),
  },
  { description: 'A webhook, just created.' },
);

const WebhookBodyFields = {
  name: Type.String({ minLength: 1, maxLength: WEBHOOK_LIMITS.nameLength, description: 'Name of the webhook.' }),
  webhookURL: Type.String({
    minLength: 1,
    maxLength: WEBHOOK_LIMITS.urlLength,
    description: 'Where deliveries go: https, to a public host (http and private hosts only with PARLEY_WEBHOOK_ALLOW_PRIVATE=1).',
  }),
  useBasicAuth: Type.Optional(Type.Boolean({ description: 'Send HTTP Basic auth with username and password (both required then).' })),
  username: Type.Optional(Type.String({ maxLength: WEBHOOK_LIMITS.usernameLength, description: 'Basic auth user name.' })),
  password: Type.Optional(Type.String({ maxLength: WEBHOOK_LIMITS.passwordLength, description: 'Basic auth password: stored to be sent, never shown.' })),
  enabled: Type.Optional(Type.Boolean({ description: 'Whether the webhook receives deliveries (default true).' })),
  retryOnFailure: Type.Optional(Type.Boolean({ default: false, description: 'Retry failed deliveries.' })),
};

export const CreateWebhookBody = Type.Object({
  id: Type.String({ minLength: 1, maxLength: WEBHOOK_LIMITS.idLength, description: 'Id of the webhook: letters, digits, _ and -.' }),
  ...WebhookBodyFields,
});

export const UpdateWebhookBody = Type.Object({
  name: Type.Optional(WebhookBodyFields.name),
  webhookURL: Type.Optional(WebhookBodyFields.webhookURL),
  useBasicAuth: WebhookBodyFields.useBasicAuth,
  username: WebhookBodyFields.username,
  password: WebhookBodyFields.password,
  enabled: WebhookBodyFields.enabled,
  retryOnFailure: Type.Optional(Type.Boolean({ description: 'Retry failed deliveries.' })),
});

export const ListWebhooksQuery = Type.Object({
  perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Webhooks per page (default 100, at most 1,000).' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Parley extension: page number, from 1.' })),
  searchKey: Type.Optional(Type.String({ maxLength: 100, description: 'Part of the name, any case.' })),
});

export const TriggersBody = Type.Object({
  triggerIds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 100, description: 'Trigger names, e.g. message_sent.' }),
});

export const WebhookResponse = Data(Webhook);
export const CreatedWebhookResponse = Data(CreatedWebhook);
export const WebhookListResponse = DataWithMeta(Type.Array(Webhook), PaginationMeta);
export const WebhookDeleteResponse = Data(SuccessMessage);
export const AddTriggersResponse = Data(Type.Record(Type.String(), SuccessMessage, { description: 'Per trigger.' }));
export const TriggerListResponse = DataWithMeta(Type.Array(Type.Object({ id: Type.String(), description: Type.String() })), PaginationMeta);
export const RemoveTriggersResponse = Data(SuccessMessage);
