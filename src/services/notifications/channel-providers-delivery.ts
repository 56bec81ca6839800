import type { RequestContext } from '../../domain/context.js';
import { isMessagingService, secretContext, type CustomProviderChannel } from '../../domain/notifications/channel-providers.js';
import { SecretBoxError, type SecretBox } from '../../domain/secret-box.js';
import type { StoredCustomProvider, StoredSendGrid, StoredTwilio } from '../../repositories/notifications/channel-providers.repository.js';

/** The app's Twilio account, ready to send an SMS with. */
export interface TwilioForDelivery {
  accountSid: string;
  /** Opened: never log it. */
  authToken: string;
  /** Twilio's `From` (a phone number in E.164), or its `MessagingServiceSid`. */
  sender: { kind: 'phoneNumber'; phoneNumber: string } | { kind: 'messagingService'; messagingServiceSid: string };
}

/** The app's SendGrid account, ready to send an e-mail with. */
export interface SendGridForDelivery {
  /** Opened: never log it. */
  apiKey: string;
  templateId: string;
  unsubscribeGroupId: string;
  senderName: string;
  senderEmail: string;
  allowEmailReplies: boolean;
  /** The Reply-To address (senderEmailForReplies), when the app gave one. */
  replyToEmail: string | undefined;
}

/** A channel's custom provider: the webhook each notification of that channel is POSTed to. */
export interface CustomProviderForDelivery {
  channel: CustomProviderChannel;
  /** Checked when saved as webhook URLs are; the address it resolves to must be checked at each call. */
  url: string;
  /** Sent as `Authorization: Basic base64(username:password)` when present (useBasicAuth). */
  basicAuth: { username: string; password: string } | undefined;
  /**
   * SMS (useStoredPhNo) and e-mail (useStoredEmailID): call it only for users whose phone number
   * or e-mail address is stored (contact details); otherwise for every user. Always false for push.
   */
  onlyStoredContact: boolean;
  /** The secrets signing each POST (X-Parley-Signature, as webhooks are signed); empty: unsigned. */
  signingSecrets: readonly string[];
}

/** The app's enabled providers, per channel (a provider disabled or not saved is absent). */
export interface ChannelProvidersForDelivery {
  push: { custom?: CustomProviderForDelivery };
  sms: { twilio?: TwilioForDelivery; custom?: CustomProviderForDelivery };
  email: { sendgrid?: SendGridForDelivery; custom?: CustomProviderForDelivery };
}

/**
 * The stored providers opened for delivery: the enabled ones, their secrets opened with
 * `secrets`. One whose secret does not open is left out, with a warning (the others still serve).
 */
export function openForDelivery(
  ctx: RequestContext,
  secrets: SecretBox,
  stored: { twilio: StoredTwilio | undefined; sendGrid: StoredSendGrid | undefined; custom: StoredCustomProvider[] },
): ChannelProvidersForDelivery {
  const appId = ctx.appId;
  const result: ChannelProvidersForDelivery = { push: {}, sms: {}, email: {} };
  const open = (sealed: string, context: string, provider: string): string | undefined => {
    try {
      return secrets.open(sealed, context);
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
      ctx.log.warn({ appId, provider, reason: error.message }, 'a notification provider is left out: its secret does not open');
      return undefined;
    }
  };
  const { twilio, sendGrid } = stored;
  if (twilio?.enabled) {
    const authToken = open(twilio.authTokenSealed, secretContext(appId, 'twilio', 'authToken'), 'twilio');
    if (authToken !== undefined) {
      const sender: TwilioForDelivery['sender'] = isMessagingService(twilio.sender)
        ? { kind: 'messagingService', messagingServiceSid: twilio.sender }
        : { kind: 'phoneNumber', phoneNumber: twilio.sender };
      result.sms.twilio = { accountSid: twilio.accountSid, authToken, sender };
    }
  }
  if (sendGrid?.enabled) {
    const apiKey = open(sendGrid.apiKeySealed, secretContext(appId, 'sendgrid', 'apiKey'), 'sendgrid');
    if (apiKey !== undefined) {
      result.email.sendgrid = {
        apiKey,
        templateId: sendGrid.templateId,
        unsubscribeGroupId: sendGrid.unsubscribeGroupId,
        senderName: sendGrid.senderName,
        senderEmail: sendGrid.senderEmail,
        allowEmailReplies: sendGrid.allowReplies,
        replyToEmail: sendGrid.replyToEmail ?? undefined,
      };
    }
  }
  for (const provider of stored.custom) {
    if (!provider.enabled) continue;
    let basicAuth: CustomProviderForDelivery['basicAuth'];
    if (provider.useBasicAuth) {
      const password = open(provider.passwordSealed!, secretContext(appId, `custom-${provider.channel}`, 'basicAuthPassword'), `custom-${provider.channel}`);
      if (password === undefined) continue;
      basicAuth = { username: provider.username!, password };
    }
    let signingSecrets: string[] = [];
    if (provider.signingSecretSealed !== null) {
      const secret = open(provider.signingSecretSealed, secretContext(appId, `custom-${provider.channel}`, 'signingSecret'), `custom-${provider.channel}`);
      if (secret === undefined) continue;
      signingSecrets = [secret];
    }
    result[provider.channel].custom = { channel: provider.channel, url: provider.url, basicAuth, onlyStoredContact: provider.onlyStoredContact, signingSecrets };
  }
  return result;
}
