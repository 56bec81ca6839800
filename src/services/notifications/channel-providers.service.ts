import crypto from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest } from '../../domain/errors.js';
import { MASKED_PASSWORD, STORED_CONTACT_FIELD, maskApiKeyOf, maskAuthTokenOf, secretContext, type CustomProviderChannel } from '../../domain/notifications/channel-providers.js';
import type { SecretBox } from '../../domain/secret-box.js';
import { maskSecret } from '../../domain/secrets.js';
import type {
  ChannelProvidersRepository,
  CustomProviderValues,
  SendGridValues,
  StoredCustomProvider,
  StoredSendGrid,
  StoredTwilio,
  TwilioValues,
} from '../../repositories/notifications/channel-providers.repository.js';
import { checkBasicAuth, checkCustom, checkSendGrid, checkTwilio, type CustomProviderInput, type GivenSecret, type SendGridInput, type TwilioInput } from './channel-providers-input.js';
import { openForDelivery, type ChannelProvidersForDelivery, type CustomProviderForDelivery } from './channel-providers-delivery.js';

export type { CustomProviderInput, SendGridInput, TwilioInput } from './channel-providers-input.js';
export type { ChannelProvidersForDelivery, CustomProviderForDelivery, SendGridForDelivery, TwilioForDelivery } from './channel-providers-delivery.js';

/** The Twilio account as the API answers it: the auth token masked. */
export interface TwilioView {
  twilioAccountSID: string;
  twilioAuthToken: string;
  twilioSenderPhoneNumber: string;
  isEnabled: boolean;
}

/** The SendGrid account as the API answers it: the API key masked. */
export interface SendGridView {
  sendGridApiKey: string;
  sendGridTemplateID: string;
  sendGridUnsubscribeGroupID: string;
  senderName: string;
  senderEmail: string;
  allowEmailReplies: boolean;
  senderEmailForReplies: string | null;
  isEnabled: boolean;
}

/** A custom provider as the API answers it: the password masked, `''` when none is stored. */
export interface CustomProviderView {
  isEnabled: boolean;
  webhookURL: string;
  useBasicAuth: boolean;
  basicAuthUsername: string;
  basicAuthPassword: string;
  useStoredPhNo?: boolean;
  useStoredEmailID?: boolean;
  /** The secret signing its POSTs: whole in the answer of the save that made it, masked after. */
  signingSecret: string;
}

export type Deleted = { success: true };

const TWILIO = 'Twilio provider for SMS notifications';
const SENDGRID = 'SendGrid provider for e-mail notifications';
const CHANNEL_NAMES: Record<CustomProviderChannel, string> = { push: 'push', sms: 'SMS', email: 'e-mail' };
const customName = (channel: CustomProviderChannel) => `custom provider for ${CHANNEL_NAMES[channel]} notifications`;

/**
 * The app's SMS and e-mail providers (Twilio, SendGrid) and its custom providers, one per channel
 * (docs/notifications.md). A save (POST) creates the provider or replaces it whole; an update
 * (PUT) changes the fields given of the one stored. Secrets are sealed with `secrets`, bound to
 * the app and the field, and answered masked; a masked value sent back keeps the stored secret.
 * Every operation acts on `ctx.appId` only.
 */
export class ChannelProvidersService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      providers: ChannelProvidersRepository;
      /** Seals provider secrets at rest (PARLEY_SECRET_KEY). */
      secrets: SecretBox;
      /** PARLEY_WEBHOOK_ALLOW_PRIVATE: custom providers' URLs may be http and private or loopback hosts. */
      allowPrivate: boolean;
      /**
       * Keeps the app's notifications in step with its providers, in the transaction that changes
       * them: its fan-out starts from the log's end at its first provider, and what a channel left
       * with no provider (removed or disabled) still owes is dropped.
       */
      syncDelivery?: (appId: string, tx: Executor) => Promise<void>;
    },
  ) {}

  // -- Twilio --

  async getTwilio(ctx: RequestContext): Promise<TwilioView> {
    const stored = await this.deps.providers.getTwilio(ctx.appId);
    if (!stored) throw notFound(TWILIO);
    return twilioView(stored);
  }

  /** notifications-sms-save-twilio-details: creates the app's Twilio account or replaces it whole. */
  saveTwilio(ctx: RequestContext, input: TwilioInput): Promise<TwilioView> {
    return this.writeTwilio(ctx, input, true);
  }

  /** notifications-sms-update-twilio-details: changes the fields given. */
  updateTwilio(ctx: RequestContext, changes: TwilioInput): Promise<TwilioView> {
    return this.writeTwilio(ctx, changes, false);
  }

  async deleteTwilio(ctx: RequestContext): Promise<Deleted> {
    await this.removed(ctx, `delete_twilio_provider`, (tx) => this.deps.providers.deleteTwilio(ctx.appId, tx), TWILIO);
    return { success: true };
  }

  private async writeTwilio(ctx: RequestContext, input: TwilioInput, save: boolean): Promise<TwilioView> {
    const appId = ctx.appId;
    const checked = checkTwilio(input, save);
    const stored = await withTransaction(
      this.deps.db,
      save ? 'save_twilio_provider' : 'update_twilio_provider',
      async (tx) => {
        const current = await this.deps.providers.getTwilio(appId, tx, true);
        if (!save && !current) throw notFound(TWILIO);
        const base = save ? undefined : current;
        const token = this.secret(
          checked.authToken,
          'twilioAuthToken',
          current && { sealed: current.authTokenSealed, hint: current.authTokenHint },
          secretContext(appId, 'twilio', 'authToken'),
          maskAuthTokenOf,
        );
        const values: TwilioValues = {
          enabled: checked.enabled ?? base?.enabled ?? true,
          accountSid: checked.accountSid ?? base!.accountSid,
          sender: checked.sender ?? base!.sender,
          authTokenSealed: token?.sealed ?? base!.authTokenSealed,
          authTokenHint: token?.hint ?? base!.authTokenHint,
        };
        await this.deps.syncDelivery?.(appId, tx);
        return this.deps.providers.upsertTwilio(appId, values, tx);
      },
      ctx.log,
    );
    return twilioView(stored);
  }

  // -- SendGrid --

  async getSendGrid(ctx: RequestContext): Promise<SendGridView> {
    const stored = await this.deps.providers.getSendGrid(ctx.appId);
    if (!stored) throw notFound(SENDGRID);
    return sendGridView(stored);
  }

  /** notifications-email-save-sendgrid-details: creates the app's SendGrid account or replaces it whole. */
  saveSendGrid(ctx: RequestContext, input: SendGridInput): Promise<SendGridView> {
    return this.writeSendGrid(ctx, input, true);
  }

  updateSendGrid(ctx: RequestContext, changes: SendGridInput): Promise<SendGridView> {
    return this.writeSendGrid(ctx, changes, false);
  }

  async deleteSendGrid(ctx: RequestContext): Promise<Deleted> {
    await this.removed(ctx, `delete_sendgrid_provider`, (tx) => this.deps.providers.deleteSendGrid(ctx.appId, tx), SENDGRID);
    return { success: true };
  }

  private async writeSendGrid(ctx: RequestContext, input: SendGridInput, save: boolean): Promise<SendGridView> {
    const appId = ctx.appId;
    const checked = checkSendGrid(input, save);
    const stored = await withTransaction(
      this.deps.db,
      save ? 'save_sendgrid_provider' : 'update_sendgrid_provider',
      async (tx) => {
        const current = await this.deps.providers.getSendGrid(appId, tx, true);
        if (!save && !current) throw notFound(SENDGRID);
        const base = save ? undefined : current;
        const key = this.secret(checked.apiKey, 'sendGridApiKey', current && { sealed: current.apiKeySealed, hint: current.apiKeyHint }, secretContext(appId, 'sendgrid', 'apiKey'), maskApiKeyOf);
        const values: SendGridValues = {
          enabled: checked.enabled ?? base?.enabled ?? true,
          apiKeySealed: key?.sealed ?? base!.apiKeySealed,
          apiKeyHint: key?.hint ?? base!.apiKeyHint,
          templateId: checked.templateId ?? base!.templateId,
          unsubscribeGroupId: checked.unsubscribeGroupId ?? base!.unsubscribeGroupId,
          senderName: checked.senderName ?? base!.senderName,
          senderEmail: checked.senderEmail ?? base!.senderEmail,
          allowReplies: checked.allowReplies ?? base?.allowReplies ?? false,
          replyToEmail: checked.replyToEmail !== undefined ? checked.replyToEmail : (base?.replyToEmail ?? null),
        };
        await this.deps.syncDelivery?.(appId, tx);
        return this.deps.providers.upsertSendGrid(appId, values, tx);
      },
      ctx.log,
    );
    return sendGridView(stored);
  }

  // -- Custom providers (push, SMS, e-mail) --

  /** The channel's custom provider; undefined when the app has none (push lists none, the others answer not found). */
  async findCustom(ctx: RequestContext, channel: CustomProviderChannel): Promise<CustomProviderView | undefined> {
    const stored = await this.deps.providers.getCustom(ctx.appId, channel);
    return stored ? customView(stored) : undefined;
  }

  async getCustom(ctx: RequestContext, channel: CustomProviderChannel): Promise<CustomProviderView> {
    const found = await this.findCustom(ctx, channel);
    if (!found) throw notFound(customName(channel));
    return found;
  }

  /** notifications-save-*-custom-provider: creates the channel's custom provider or replaces it whole. */
  saveCustom(ctx: RequestContext, channel: CustomProviderChannel, input: CustomProviderInput): Promise<CustomProviderView> {
    return this.writeCustom(ctx, channel, input, true);
  }

  updateCustom(ctx: RequestContext, channel: CustomProviderChannel, changes: CustomProviderInput): Promise<CustomProviderView> {
    return this.writeCustom(ctx, channel, changes, false);
  }

  async deleteCustom(ctx: RequestContext, channel: CustomProviderChannel): Promise<Deleted> {
    await this.removed(ctx, 'delete_custom_provider', (tx) => this.deps.providers.deleteCustom(ctx.appId, channel, tx), customName(channel));
    return { success: true };
  }

  /** A provider deleted (`remove` answers whether there was one), and the app's notifications kept in step. */
  private async removed(ctx: RequestContext, name: string, remove: (tx: Executor) => Promise<boolean>, provider: string): Promise<void> {
    await withTransaction(
      this.deps.db,
      name,
      async (tx) => {
        if (!(await remove(tx))) throw notFound(provider);
        await this.deps.syncDelivery?.(ctx.appId, tx);
      },
      ctx.log,
    );
  }

  private async writeCustom(ctx: RequestContext, channel: CustomProviderChannel, input: CustomProviderInput, save: boolean): Promise<CustomProviderView> {
    const appId = ctx.appId;
    const checked = checkCustom(input, save, STORED_CONTACT_FIELD[channel], this.deps.allowPrivate);
    let made: string | undefined;
    const stored = await withTransaction(
      this.deps.db,
      save ? 'save_custom_provider' : 'update_custom_provider',
      async (tx) => {
        const current = await this.deps.providers.getCustom(appId, channel, tx, true);
        if (!save && !current) throw notFound(customName(channel));
        const base = save ? undefined : current;
        // A masked password keeps the stored one (when there is one); an empty one removes it.
        const stored = current?.passwordSealed ? { sealed: current.passwordSealed, hint: MASKED_PASSWORD } : undefined;
        const password =
          checked.password === null ? null : this.secret(checked.password, 'basicAuthPassword', stored, secretContext(appId, `custom-${channel}`, 'basicAuthPassword'), () => MASKED_PASSWORD);
        const values: CustomProviderValues = {
          enabled: checked.enabled ?? base?.enabled ?? true,
          url: checked.url ?? base!.url,
          useBasicAuth: checked.useBasicAuth ?? base?.useBasicAuth ?? false,
          username: checked.username !== undefined ? checked.username : (base?.username ?? null),
          passwordSealed: password === null ? null : (password?.sealed ?? base?.passwordSealed ?? null),
          onlyStoredContact: checked.onlyStoredContact ?? base?.onlyStoredContact ?? false,
          signingSecretSealed: current?.signingSecretSealed ?? null,
          signingSecretHint: current?.signingSecretHint ?? null,
        };
        // The secret signing its POSTs, made when it is first saved (or first saved since migration 0025).
        if (values.signingSecretSealed === null) {
          made = crypto.randomBytes(32).toString('hex');
          values.signingSecretSealed = this.deps.secrets.seal(made, secretContext(appId, `custom-${channel}`, 'signingSecret'));
          values.signingSecretHint = maskSecret(made, 4, 4);
        }
        checkBasicAuth(values.useBasicAuth, values.username !== null, values.passwordSealed !== null);
        await this.deps.syncDelivery?.(appId, tx);
        const saved = await this.deps.providers.upsertCustom(appId, channel, values, tx);
        // Another save made the secret first: this answer shows the stored one, masked.
        if (saved.signingSecretSealed !== values.signingSecretSealed) made = undefined;
        return saved;
      },
      ctx.log,
    );
    return customView(stored, made);
  }

  // -- For the delivery engine --

  /**
   * The app's enabled providers, per channel, with their secrets opened: what the delivery of a
   * notification needs. A provider whose secret does not open (sealed under another
   * PARLEY_SECRET_KEY, or altered) is left out, with a warning in the log.
   */
  async forDelivery(ctx: RequestContext): Promise<ChannelProvidersForDelivery> {
    const appId = ctx.appId;
    const [twilio, sendGrid, custom] = await Promise.all([this.deps.providers.getTwilio(appId), this.deps.providers.getSendGrid(appId), this.deps.providers.listCustom(appId)]);
    return openForDelivery(ctx, this.deps.secrets, { twilio, sendGrid, custom });
  }

  /** The channel's custom provider for delivery, opened (as forDelivery has it), read alone: push's rounds need no more. */
  async customForDelivery(ctx: RequestContext, channel: CustomProviderChannel): Promise<CustomProviderForDelivery | undefined> {
    const custom = await this.deps.providers.getCustom(ctx.appId, channel);
    return openForDelivery(ctx, this.deps.secrets, { twilio: undefined, sendGrid: undefined, custom: custom ? [custom] : [] })[channel].custom;
  }

  /**
   * A secret given in a body, sealed: undefined when not given (the stored one stays). A masked
   * value is the stored secret's mask (`stored.hint`), which keeps it, or refused.
   */
  private secret(
    given: GivenSecret | undefined,
    field: string,
    stored: { sealed: string; hint: string } | undefined,
    context: string,
    mask: (plain: string) => string,
  ): { sealed: string; hint: string } | undefined {
    if (given === undefined) return undefined;
    if ('masked' in given) {
      if (stored && given.masked === stored.hint) return stored;
      throw badRequest({ [field]: given.problem });
    }
    return { sealed: this.deps.secrets.seal(given.plain, context), hint: mask(given.plain) };
  }
}

function notFound(provider: string): AppError {
  return new AppError('ERR_NOTIFICATION_PROVIDER_NOT_FOUND', { params: { provider } });
}

function twilioView(stored: StoredTwilio): TwilioView {
  return {
    twilioAccountSID: stored.accountSid,
    twilioAuthToken: stored.authTokenHint,
    twilioSenderPhoneNumber: stored.sender,
    isEnabled: stored.enabled,
  };
}

function sendGridView(stored: StoredSendGrid): SendGridView {
  return {
    sendGridApiKey: stored.apiKeyHint,
    sendGridTemplateID: stored.templateId,
    sendGridUnsubscribeGroupID: stored.unsubscribeGroupId,
    senderName: stored.senderName,
    senderEmail: stored.senderEmail,
    allowEmailReplies: stored.allowReplies,
    senderEmailForReplies: stored.replyToEmail,
    isEnabled: stored.enabled,
  };
}

/** The view of a custom provider; `madeSecret`, the signing secret in plain, when this write made it. */
function customView(stored: StoredCustomProvider, madeSecret?: string): CustomProviderView {
  const view: CustomProviderView = {
    isEnabled: stored.enabled,
    webhookURL: stored.url,
    useBasicAuth: stored.useBasicAuth,
    basicAuthUsername: stored.username ?? '',
    basicAuthPassword: stored.passwordSealed === null ? '' : MASKED_PASSWORD,
    signingSecret: madeSecret ?? stored.signingSecretHint ?? '',
  };
  const option = STORED_CONTACT_FIELD[stored.channel];
  if (option) view[option] = stored.onlyStoredContact;
  return view;
}
