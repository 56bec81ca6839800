import { sql } from 'kysely';
import type { NotificationSettingsTable } from '../../db/notification-preferences-tables.js';
import type { Executor } from '../../db/transaction.js';
import type { AppNotificationSettings } from '../../domain/notifications/preferences.js';

export type { NotificationSettingsTable };

/** An app's stored settings, as JSON (read back over the defaults: domain/notifications/preferences-input.ts, mergeKnown). */
export interface StoredNotificationSettings {
  preferences: unknown;
  sound: unknown;
  templates: unknown;
}

/** An app's notification settings (migration 0020): one row, or none for the defaults. */
export class NotificationSettingsRepository {
  constructor(private readonly db: Executor) {}

  async get(appId: string, tx: Executor = this.db): Promise<StoredNotificationSettings | undefined> {
    return tx.selectFrom('notification_settings').select(['preferences', 'sound', 'templates']).where('app_id', '=', appId).executeTakeFirst();
  }

  /** The app's settings changes take turns until the transaction ends (an app with no row has nothing to lock). */
  async lock(appId: string, tx: Executor): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`notification_settings:${appId}`}, 0))`.execute(tx);
  }

  async put(appId: string, settings: AppNotificationSettings, tx: Executor = this.db): Promise<void> {
    const values = {
      preferences: JSON.stringify(settings.preferences),
      sound: JSON.stringify(settings.sound),
      templates: JSON.stringify(settings.templates),
      updated_at: new Date(),
    };
    await tx
      .insertInto('notification_settings')
      .values({ app_id: appId, ...values })
      .onConflict((oc) => oc.column('app_id').doUpdateSet(values))
      .execute();
  }

  async delete(appId: string, tx: Executor = this.db): Promise<void> {
    await tx.deleteFrom('notification_settings').where('app_id', '=', appId).execute();
  }
}
