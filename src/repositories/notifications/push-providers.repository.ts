import { extended } from '../../domain/objects.js';
import { sql, type Selectable } from 'kysely';
import type { NotificationApnsProvidersTable, NotificationFcmProvidersTable } from '../../db/notification-push-providers-tables.js';
import type { Executor } from '../../db/transaction.js';
import { mergeNotificationInPayload, DEFAULT_NOTIFICATION_IN_PAYLOAD, type NotificationInPayload, type PushProviderKind } from '../../domain/notifications/push-providers.js';

/** An app's FCM provider as stored: its service account sealed. */
export interface StoredFcmProvider {
  providerId: string;
  isDefault: boolean;
  serviceAccountFilename: string | null;
  projectId: string;
  clientEmail: string;
  privateKeyId: string | null;
  serviceAccountSealed: string;
  notificationInPayload: NotificationInPayload;
  createdAt: Date;
  updatedAt: Date;
}

/** An app's APNs provider as stored: its .p8 key sealed. */
export interface StoredApnsProvider {
  providerId: string;
  isDefault: boolean;
  keyId: string;
  teamId: string;
  bundleId: string;
  p8KeyFilename: string | null;
  p8KeySealed: string;
  productionMode: boolean;
  includeContentAvailable: boolean;
  includeMutableContent: boolean;
  createdAt: Date;
  updatedAt: Date;
}

type FcmValues = Omit<StoredFcmProvider, 'providerId' | 'isDefault' | 'createdAt' | 'updatedAt'>;
type ApnsValues = Omit<StoredApnsProvider, 'providerId' | 'isDefault' | 'createdAt' | 'updatedAt'>;

const TABLES = { fcm: 'notification_fcm_providers', apns: 'notification_apns_providers' } as const;

/**
 * An app's FCM and APNs providers (notification_fcm_providers, notification_apns_providers).
 * Whichever the kind, the app has at most one default (a partial unique index), and the
 * writes that move it take turns (`lock`).
 */
export class PushProvidersRepository {
  constructor(private readonly db: Executor) {}

  /** Makes the writes of the app's providers of this kind take turns until the transaction ends (an advisory lock). */
  async lock(appId: string, kind: PushProviderKind, tx: Executor): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`notification_push_providers:${kind}:${appId}`}, 0))`.execute(tx);
  }

  async count(appId: string, kind: PushProviderKind, tx: Executor = this.db): Promise<number> {
    const { rows } = await sql<{ n: string | number }>`select count(*) as n from ${sql.table(TABLES[kind])} where app_id = ${appId}`.execute(tx);
    return Number(rows[0]?.n ?? 0);
  }

  async exists(appId: string, kind: PushProviderKind, providerId: string, tx: Executor = this.db): Promise<boolean> {
    const { rows } = await sql`select 1 from ${sql.table(TABLES[kind])} where app_id = ${appId} and provider_id = ${providerId}`.execute(tx);
    return rows.length > 0;
  }

  async hasDefault(appId: string, kind: PushProviderKind, tx: Executor = this.db): Promise<boolean> {
    const { rows } = await sql`select 1 from ${sql.table(TABLES[kind])} where app_id = ${appId} and is_default`.execute(tx);
    return rows.length > 0;
  }

  /** Deletes a provider; whether it was the default, or undefined when there was none with this id. */
  async delete(appId: string, kind: PushProviderKind, providerId: string, tx: Executor = this.db): Promise<{ wasDefault: boolean } | undefined> {
    const { rows } = await sql<{ is_default: boolean }>`
      delete from ${sql.table(TABLES[kind])} where app_id = ${appId} and provider_id = ${providerId} returning is_default`.execute(tx);
    return rows[0] ? { wasDefault: rows[0].is_default } : undefined;
  }

  /**
   * Makes this provider the app's default of its kind, the former one no longer (two statements:
   * the unique index is checked row by row, so the former is cleared first). Under `lock`.
   */
  async setDefault(appId: string, kind: PushProviderKind, providerId: string, tx: Executor): Promise<void> {
    const table = sql.table(TABLES[kind]);
    await sql`update ${table} set is_default = false, updated_at = now() where app_id = ${appId} and is_default and provider_id <> ${providerId}`.execute(tx);
    await sql`update ${table} set is_default = true, updated_at = now() where app_id = ${appId} and provider_id = ${providerId} and not is_default`.execute(tx);
  }

  /** The oldest provider of the kind made the default (after the default was deleted); its id, if the app has any left. Under `lock`. */
  async promoteOldest(appId: string, kind: PushProviderKind, tx: Executor): Promise<string | undefined> {
    const table = sql.table(TABLES[kind]);
    const { rows } = await sql<{ provider_id: string }>`
      update ${table} set is_default = true, updated_at = now()
       where app_id = ${appId}
         and provider_id = (select provider_id from ${table} where app_id = ${appId} order by created_at, provider_id limit 1)
      returning provider_id`.execute(tx);
    return rows[0]?.provider_id;
  }

  // -- FCM --

  async listFcm(appId: string, tx: Executor = this.db): Promise<StoredFcmProvider[]> {
    const rows = await tx.selectFrom('notification_fcm_providers').selectAll().where('app_id', '=', appId).orderBy('created_at').orderBy('provider_id').execute();
    return rows.map(toFcm);
  }

  async getFcm(appId: string, providerId: string, tx: Executor = this.db): Promise<StoredFcmProvider | undefined> {
    const row = await tx.selectFrom('notification_fcm_providers').selectAll().where('app_id', '=', appId).where('provider_id', '=', providerId).executeTakeFirst();
    return row ? toFcm(row) : undefined;
  }

  /** Inserts a provider; an existing id rejects with UniqueViolation. */
  async createFcm(appId: string, providerId: string, isDefault: boolean, values: FcmValues, tx: Executor = this.db): Promise<void> {
    await tx
      .insertInto('notification_fcm_providers')
      .values({ app_id: appId, provider_id: providerId, is_default: isDefault, ...fcmColumns(values) })
      .execute();
  }

  /** Replaces the provider's fields (not its id, default or creation time); whether it exists. */
  async updateFcm(appId: string, providerId: string, values: FcmValues, tx: Executor = this.db): Promise<boolean> {
    const result = await tx
      .updateTable('notification_fcm_providers')
      .set(extended(fcmColumns(values), { updated_at: new Date() }))
      .where('app_id', '=', appId)
      .where('provider_id', '=', providerId)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }

  // -- APNs --

  async listApns(appId: string, tx: Executor = this.db): Promise<StoredApnsProvider[]> {
    const rows = await tx.selectFrom('notification_apns_providers').selectAll().where('app_id', '=', appId).orderBy('created_at').orderBy('provider_id').execute();
    return rows.map(toApns);
  }

  async getApns(appId: string, providerId: string, tx: Executor = this.db): Promise<StoredApnsProvider | undefined> {
    const row = await tx.selectFrom('notification_apns_providers').selectAll().where('app_id', '=', appId).where('provider_id', '=', providerId).executeTakeFirst();
    return row ? toApns(row) : undefined;
  }

  async createApns(appId: string, providerId: string, isDefault: boolean, values: ApnsValues, tx: Executor = this.db): Promise<void> {
    await tx
      .insertInto('notification_apns_providers')
      .values({ app_id: appId, provider_id: providerId, is_default: isDefault, ...apnsColumns(values) })
      .execute();
  }

  async updateApns(appId: string, providerId: string, values: ApnsValues, tx: Executor = this.db): Promise<boolean> {
    const result = await tx
      .updateTable('notification_apns_providers')
      .set(extended(apnsColumns(values), { updated_at: new Date() }))
      .where('app_id', '=', appId)
      .where('provider_id', '=', providerId)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
}

// Field by field: `values` may come from an object holding more fields than its type names.
function fcmColumns(values: FcmValues) {
  return {
    service_account_filename: values.serviceAccountFilename,
    project_id: values.projectId,
    client_email: values.clientEmail,
    private_key_id: values.privateKeyId,
    service_account_sealed: values.serviceAccountSealed,
    notification_in_payload: JSON.stringify(values.notificationInPayload),
  };
}

function apnsColumns(values: ApnsValues) {
  return {
    key_id: values.keyId,
    team_id: values.teamId,
    bundle_id: values.bundleId,
    p8_key_filename: values.p8KeyFilename,
    p8_key_sealed: values.p8KeySealed,
    production_mode: values.productionMode,
    include_content_available: values.includeContentAvailable,
    include_mutable_content: values.includeMutableContent,
  };
}

function toFcm(row: Selectable<NotificationFcmProvidersTable>): StoredFcmProvider {
  return {
    providerId: row.provider_id,
    isDefault: row.is_default,
    serviceAccountFilename: row.service_account_filename,
    projectId: row.project_id,
    clientEmail: row.client_email,
    privateKeyId: row.private_key_id,
    serviceAccountSealed: row.service_account_sealed,
    // As stored, over the defaults: a row is read whole whatever it holds.
    notificationInPayload: mergeNotificationInPayload(DEFAULT_NOTIFICATION_IN_PAYLOAD, row.notification_in_payload as never),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toApns(row: Selectable<NotificationApnsProvidersTable>): StoredApnsProvider {
  return {
    providerId: row.provider_id,
    isDefault: row.is_default,
    keyId: row.key_id,
    teamId: row.team_id,
    bundleId: row.bundle_id,
    p8KeyFilename: row.p8_key_filename,
    p8KeySealed: row.p8_key_sealed,
    productionMode: row.production_mode,
    includeContentAvailable: row.include_content_available,
    includeMutableContent: row.include_mutable_content,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
