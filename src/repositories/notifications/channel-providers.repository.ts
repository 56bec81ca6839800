import { sql, type Selectable } from 'kysely';
import type { NotificationCustomProvidersTable, NotificationSendgridProvidersTable, NotificationTwilioProvidersTable } from '../../db/notification-channel-providers-tables.js';
import type { Executor } from '../../db/transaction.js';
import type { CustomProviderChannel } from '../../domain/notifications/channel-providers.js';
import { extended } from '../../domain/objects.js';

/** The app's Twilio account as stored: its auth token sealed, with the masked form the API shows. */
export interface TwilioValues {
  enabled: boolean;
  accountSid: string;
  /** A phone number (E.164) or a messaging service SID. */
  sender: string;
  authTokenSealed: string;
  authTokenHint: string;
}

export interface SendGridValues {
  enabled: boolean;
  apiKeySealed: string;
  apiKeyHint: string;
  templateId: string;
  unsubscribeGroupId: string;
  senderName: string;
  senderEmail: string;
  allowReplies: boolean;
  replyToEmail: string | null;
}

export interface CustomProviderValues {
  enabled: boolean;
  url: string;
  useBasicAuth: boolean;
  username: string | null;
  passwordSealed: string | null;
  /** SMS: useStoredPhNo; e-mail: useStoredEmailID; push: always false. */
  onlyStoredContact: boolean;
  /** The secret signing its POSTs (X-Parley-Signature), sealed, and its masked form; null before migration 0025's first save. */
  signingSecretSealed: string | null;
  signingSecretHint: string | null;
}

interface Times {
  createdAt: Date;
  updatedAt: Date;
}
export type StoredTwilio = TwilioValues & Times;
export type StoredSendGrid = SendGridValues & Times;
export type StoredCustomProvider = CustomProviderValues & Times & { channel: CustomProviderChannel };

/**
 * The app's SMS and e-mail providers and its custom providers (migration 0022): at most one
 * Twilio account, one SendGrid account and one custom provider per channel per app. `lock` reads
 * a row FOR UPDATE, so a change read-then-written in a transaction is not lost to another.
 */
export class ChannelProvidersRepository {
  constructor(private readonly db: Executor) {}

  async getTwilio(appId: string, tx: Executor = this.db, lock = false): Promise<StoredTwilio | undefined> {
    const query = tx.selectFrom('notification_twilio_providers').selectAll().where('app_id', '=', appId);
    const row = await (lock ? query.forUpdate() : query).executeTakeFirst();
    return row ? toTwilio(row) : undefined;
  }

  /** Creates the app's Twilio account or replaces it whole (its creation time kept). */
  async upsertTwilio(appId: string, values: TwilioValues, tx: Executor = this.db): Promise<StoredTwilio> {
    // Field by field: `values` may come from a body holding more fields than its type names.
    const set = {
      enabled: values.enabled,
      account_sid: values.accountSid,
      sender: values.sender,
      auth_token_sealed: values.authTokenSealed,
      auth_token_hint: values.authTokenHint,
    };
    const row = await tx
      .insertInto('notification_twilio_providers')
      .values({ app_id: appId, ...set })
      .onConflict((oc) => oc.column('app_id').doUpdateSet(extended(set, { updated_at: sql`now()` })))
      .returningAll()
      .executeTakeFirstOrThrow();
    return toTwilio(row);
  }

  /** Deletes the app's Twilio account; whether it had one. */
  async deleteTwilio(appId: string, tx: Executor = this.db): Promise<boolean> {
    const row = await tx.deleteFrom('notification_twilio_providers').where('app_id', '=', appId).returning('app_id').executeTakeFirst();
    return row !== undefined;
  }

  async getSendGrid(appId: string, tx: Executor = this.db, lock = false): Promise<StoredSendGrid | undefined> {
    const query = tx.selectFrom('notification_sendgrid_providers').selectAll().where('app_id', '=', appId);
    const row = await (lock ? query.forUpdate() : query).executeTakeFirst();
    return row ? toSendGrid(row) : undefined;
  }

  async upsertSendGrid(appId: string, values: SendGridValues, tx: Executor = this.db): Promise<StoredSendGrid> {
    const set = {
      enabled: values.enabled,
      api_key_sealed: values.apiKeySealed,
      api_key_hint: values.apiKeyHint,
      template_id: values.templateId,
      unsubscribe_group_id: values.unsubscribeGroupId,
      sender_name: values.senderName,
      sender_email: values.senderEmail,
      allow_replies: values.allowReplies,
      reply_to_email: values.replyToEmail,
    };
    const row = await tx
      .insertInto('notification_sendgrid_providers')
      .values({ app_id: appId, ...set })
      .onConflict((oc) => oc.column('app_id').doUpdateSet(extended(set, { updated_at: sql`now()` })))
      .returningAll()
      .executeTakeFirstOrThrow();
    return toSendGrid(row);
  }

  async deleteSendGrid(appId: string, tx: Executor = this.db): Promise<boolean> {
    const row = await tx.deleteFrom('notification_sendgrid_providers').where('app_id', '=', appId).returning('app_id').executeTakeFirst();
    return row !== undefined;
  }

  async getCustom(appId: string, channel: CustomProviderChannel, tx: Executor = this.db, lock = false): Promise<StoredCustomProvider | undefined> {
    const query = tx.selectFrom('notification_custom_providers').selectAll().where('app_id', '=', appId).where('channel', '=', channel);
    const row = await (lock ? query.forUpdate() : query).executeTakeFirst();
    return row ? toCustom(row) : undefined;
  }

  /** The app's custom providers of every channel. */
  async listCustom(appId: string, tx: Executor = this.db): Promise<StoredCustomProvider[]> {
    const rows = await tx.selectFrom('notification_custom_providers').selectAll().where('app_id', '=', appId).orderBy('channel').execute();
    return rows.map(toCustom);
  }

  async upsertCustom(appId: string, channel: CustomProviderChannel, values: CustomProviderValues, tx: Executor = this.db): Promise<StoredCustomProvider> {
    const set = {
      enabled: values.enabled,
      url: values.url,
      use_basic_auth: values.useBasicAuth,
      username: values.username,
      password_sealed: values.passwordSealed,
      only_stored_contact: values.onlyStoredContact,
      signing_secret_sealed: values.signingSecretSealed,
      signing_secret_hint: values.signingSecretHint,
    };
    const row = await tx
      .insertInto('notification_custom_providers')
      .values({ app_id: appId, channel, ...set })
      // A provider's signing secret, once made, is kept: of two first saves at once, the first's.
      .onConflict((oc) =>
        oc.columns(['app_id', 'channel']).doUpdateSet(
          extended(set, {
            signing_secret_sealed: sql`coalesce(notification_custom_providers.signing_secret_sealed, excluded.signing_secret_sealed)`,
            signing_secret_hint: sql`coalesce(notification_custom_providers.signing_secret_hint, excluded.signing_secret_hint)`,
            updated_at: sql`now()`,
          }),
        ),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return toCustom(row);
  }

  async deleteCustom(appId: string, channel: CustomProviderChannel, tx: Executor = this.db): Promise<boolean> {
    const row = await tx.deleteFrom('notification_custom_providers').where('app_id', '=', appId).where('channel', '=', channel).returning('app_id').executeTakeFirst();
    return row !== undefined;
  }
}

function toTwilio(row: Selectable<NotificationTwilioProvidersTable>): StoredTwilio {
  return {
    enabled: row.enabled,
    accountSid: row.account_sid,
    sender: row.sender,
    authTokenSealed: row.auth_token_sealed,
    authTokenHint: row.auth_token_hint,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toSendGrid(row: Selectable<NotificationSendgridProvidersTable>): StoredSendGrid {
  return {
    enabled: row.enabled,
    apiKeySealed: row.api_key_sealed,
    apiKeyHint: row.api_key_hint,
    templateId: row.template_id,
    unsubscribeGroupId: row.unsubscribe_group_id,
    senderName: row.sender_name,
    senderEmail: row.sender_email,
    allowReplies: row.allow_replies,
    replyToEmail: row.reply_to_email,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toCustom(row: Selectable<NotificationCustomProvidersTable>): StoredCustomProvider {
  return {
    channel: row.channel,
    enabled: row.enabled,
    url: row.url,
    useBasicAuth: row.use_basic_auth,
    username: row.username,
    passwordSealed: row.password_sealed,
    onlyStoredContact: row.only_stored_contact,
    signingSecretSealed: row.signing_secret_sealed,
    signingSecretHint: row.signing_secret_hint,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
