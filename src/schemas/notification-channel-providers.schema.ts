import { Type, type TProperties } from '@sinclair/typebox';
import { CHANNEL_PROVIDER_LIMITS, MASKED_PASSWORD, type CustomProviderChannel } from '../domain/notifications/channel-providers.js';
import { Data } from './common.schema.js';

// The app's SMS and e-mail providers (Twilio, SendGrid) and custom providers (docs/notifications.md),
// with the vendor's field names. The schemas check types and bound lengths; the service checks
// forms (SIDs, E.164, e-mail addresses, URLs) and names the rule a value breaks.

/** A bound well above every valid value: a longer one is refused here, a malformed one by the service with its rule. */
const SHORT = 200;

const EnabledField = Type.Boolean({ description: 'Whether notifications are sent through this provider; true unless given.' });

const twilioFields = {
  twilioAccountSID: Type.String({ maxLength: SHORT, description: 'The Twilio account SID: AC and 32 hex digits.' }),
  twilioAuthToken: Type.String({
    maxLength: CHANNEL_PROVIDER_LIMITS.authTokenLength,
    description: "The account's auth token. Stored sealed and answered masked (its first and last 4 characters); the masked value sent back keeps the stored token.",
  }),
  twilioSenderPhoneNumber: Type.String({
    maxLength: SHORT,
    description: 'The sender: a phone number in E.164 form (+13611364718) or a messaging service SID (MG and 32 hex digits).',
  }),
  isEnabled: EnabledField,
};

export const SaveTwilioBody = Type.Object({
  twilioAccountSID: twilioFields.twilioAccountSID,
  twilioAuthToken: twilioFields.twilioAuthToken,
  twilioSenderPhoneNumber: twilioFields.twilioSenderPhoneNumber,
  isEnabled: Type.Optional(twilioFields.isEnabled),
});
export const UpdateTwilioBody = Type.Partial(Type.Object(twilioFields));

export const TwilioResponse = Data(
  Type.Object(
    {
      twilioAccountSID: Type.String(),
      twilioAuthToken: Type.String({ description: 'Masked: its first and last 4 characters.' }),
      twilioSenderPhoneNumber: Type.String(),
      isEnabled: Type.Boolean(),
    },
    { description: "The app's Twilio account, for SMS notifications." },
  ),
);

const sendGridFields = {
  sendGridApiKey: Type.String({
    maxLength: CHANNEL_PROVIDER_LIMITS.apiKeyLength,
    description: 'A SendGrid API key (SG.…) allowed to send mail. Stored sealed and answered masked (SG. and 3 more characters, and its last 4); the masked value sent back keeps the stored key.',
  }),
  sendGridTemplateID: Type.String({ maxLength: SHORT, description: 'The dynamic template of the e-mails (d- and 32 hex digits).' }),
  sendGridUnsubscribeGroupID: Type.String({ maxLength: SHORT, description: 'The unsubscribe group of the e-mails: its number, as text.' }),
  senderName: Type.String({ maxLength: SHORT, description: 'The name the e-mails are from (no line breaks or control characters).' }),
  senderEmail: Type.String({ maxLength: 2 * SHORT, description: 'The address the e-mails are from.' }),
  allowEmailReplies: Type.Boolean({ description: 'Whether users may reply to the e-mails; false unless given.' }),
  senderEmailForReplies: Type.Union([Type.String({ maxLength: 2 * SHORT }), Type.Null()], {
    description: 'Where replies go (Reply-To), optional; null or an empty string removes it.',
  }),
  isEnabled: EnabledField,
};

export const SaveSendGridBody = Type.Object({
  sendGridApiKey: sendGridFields.sendGridApiKey,
  sendGridTemplateID: sendGridFields.sendGridTemplateID,
  sendGridUnsubscribeGroupID: sendGridFields.sendGridUnsubscribeGroupID,
  senderName: sendGridFields.senderName,
  senderEmail: sendGridFields.senderEmail,
  allowEmailReplies: Type.Optional(sendGridFields.allowEmailReplies),
  senderEmailForReplies: Type.Optional(sendGridFields.senderEmailForReplies),
  isEnabled: Type.Optional(sendGridFields.isEnabled),
});
export const UpdateSendGridBody = Type.Partial(Type.Object(sendGridFields));

export const SendGridResponse = Data(
  Type.Object(
    {
      sendGridApiKey: Type.String({ description: 'Masked: SG. and 3 more characters, and its last 4.' }),
      sendGridTemplateID: Type.String(),
      sendGridUnsubscribeGroupID: Type.String(),
      senderName: Type.String(),
      senderEmail: Type.String(),
      allowEmailReplies: Type.Boolean(),
      senderEmailForReplies: Type.Union([Type.String(), Type.Null()]),
      isEnabled: Type.Boolean(),
    },
    { description: "The app's SendGrid account, for e-mail notifications." },
  ),
);

const STORED_CONTACT_OPTIONS: Record<CustomProviderChannel, TProperties> = {
  push: {},
  sms: {
    useStoredPhNo: Type.Boolean({ description: "If true, the webhook is called for a user only when the user's phone number is stored (contact details); false unless given." }),
  },
  email: {
    useStoredEmailID: Type.Boolean({ description: "If true, the webhook is called for a user only when the user's e-mail address is stored (contact details); false unless given." }),
  },
};

function customFields(channel: CustomProviderChannel) {
  return {
    isEnabled: Type.Boolean({ description: 'Whether notifications are sent to the custom provider; true unless given.' }),
    webhookURL: Type.String({
      maxLength: 2 * CHANNEL_PROVIDER_LIMITS.urlLength,
      description:
        `The webhook each notification is POSTed to: https to a public host (unless the deployment sets PARLEY_WEBHOOK_ALLOW_PRIVATE=1), at most ${CHANNEL_PROVIDER_LIMITS.urlLength} characters, ` +
        'with no user name or password, whitespace or control characters.',
    }),
    useBasicAuth: Type.Boolean({ description: 'Whether the calls carry Basic auth (basicAuthUsername, basicAuthPassword); false unless given.' }),
    basicAuthUsername: Type.String({ maxLength: SHORT, description: `The Basic-auth user name (at most ${CHANNEL_PROVIDER_LIMITS.usernameLength} characters, no colon); an empty string removes it.` }),
    basicAuthPassword: Type.String({
      maxLength: SHORT,
      description: `The Basic-auth password (at most ${CHANNEL_PROVIDER_LIMITS.passwordLength} characters). Stored sealed and answered as ${MASKED_PASSWORD}, which sent back keeps it; an empty string removes it.`,
    }),
    ...STORED_CONTACT_OPTIONS[channel],
  };
}

/** The body of notifications-save-<channel>-custom-provider: webhookURL required, the rest with defaults. */
export function saveCustomBody(channel: CustomProviderChannel) {
  const { webhookURL, ...others } = customFields(channel);
  return Type.Object({ webhookURL, ...Type.Partial(Type.Object(others)).properties });
}

/** The body of notifications-update-<channel>-custom-provider: the fields to change. */
export function updateCustomBody(channel: CustomProviderChannel) {
  return Type.Partial(Type.Object(customFields(channel)));
}

function customView(channel: CustomProviderChannel) {
  return Type.Object(
    {
      isEnabled: Type.Boolean(),
      webhookURL: Type.String(),
      useBasicAuth: Type.Boolean(),
      basicAuthUsername: Type.String({ description: 'Empty when none is stored.' }),
      basicAuthPassword: Type.String({ description: `${MASKED_PASSWORD} when one is stored, empty otherwise.` }),
      ...STORED_CONTACT_OPTIONS[channel],
      signingSecret: Type.String({
        description:
          'The secret signing each POST (X-Parley-Signature, verified as a webhook delivery is): whole in the answer of the save that creates the provider, ' +
          'its first and last 4 characters after. Parley-only; deleting the provider and saving it again makes a new one.',
      }),
    },
    { description: `The app's custom provider for ${channel} notifications.` },
  );
}

/** Push's answers list its custom provider (none or one), as the vendor's `pushProviders`. */
export const PushCustomProviderResponse = Data(Type.Object({ pushProviders: Type.Array(customView('push')) }));
export const SmsCustomProviderResponse = Data(customView('sms'));
export const EmailCustomProviderResponse = Data(customView('email'));

export const ProviderDeletedResponse = Data(Type.Object({ success: Type.Boolean() }));
