import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import { defaultNotificationSettings } from '../../domain/notifications/preferences-defaults.js';
import { mergeKnown, settingsChangeProblems } from '../../domain/notifications/preferences-input.js';
import type { AppNotificationSettings } from '../../domain/notifications/preferences.js';
import type { NotificationSettingsRepository, StoredNotificationSettings } from '../../repositories/notifications/notification-settings.repository.js';

/** A change to the app's settings (notifications-push-update-settings): any part of them, checked by its schema. */
export interface NotificationSettingsChange {
  // biome-ignore lint/suspicious/noExplicitAny: checked field by field (settingsChangeProblems)
  preferences?: Record<string, any>;
  sound?: Record<string, unknown>;
  templates?: Record<string, unknown>;
}

/** The stored settings read over the defaults: a field added since they were stored has its default. */
function fromStored(stored: StoredNotificationSettings | undefined): AppNotificationSettings {
  const defaults = defaultNotificationSettings();
  if (!stored) return defaults;
  return {
    preferences: mergeKnown(defaults.preferences, stored.preferences),
    sound: mergeKnown(defaults.sound, stored.sound),
    templates: mergeKnown(defaults.templates, stored.templates),
  };
}

/**
 * The app's notification settings (notifications-push-*-settings): preferences with their "user
 * may override" flags, sounds and templates. The delivery engine reads them with `get`.
 */
export class NotificationSettingsService {
  constructor(private readonly deps: { db: Kysely<DB>; settings: NotificationSettingsRepository }) {}

  /** notifications-push-list-settings: every field, the defaults where the app set none. */
  async get(ctx: RequestContext, tx?: Executor): Promise<AppNotificationSettings> {
    return fromStored(await this.deps.settings.get(ctx.appId, tx));
  }

  /**
   * notifications-push-update-settings: the fields given replace the app's (customJson whole),
   * the others stay. Refused whole (ERR_BAD_REQUEST naming the fields) when a time of day is
   * none, customJson is too large, or a digest's maxPerDayPerConversation passes its maxPerDay.
   */
  async update(ctx: RequestContext, change: NotificationSettingsChange): Promise<{ success: true }> {
    await withTransaction(
      this.deps.db,
      'update_notification_settings',
      async (tx) => {
        await this.deps.settings.lock(ctx.appId, tx);
        const current = await this.get(ctx, tx);
        const merged: AppNotificationSettings = {
          preferences: mergeKnown(current.preferences, change.preferences),
          sound: mergeKnown(current.sound, change.sound),
          templates: mergeKnown(current.templates, change.templates),
        };
        const problems = settingsChangeProblems(change, merged);
        if (Object.keys(problems).length > 0) throw badRequest(problems);
        await this.deps.settings.put(ctx.appId, merged, tx);
      },
      ctx.log,
    );
    return { success: true };
  }

  /** notifications-push-reset-settings: back to the defaults. Users' own values stay (they apply where the defaults let them). */
  async reset(ctx: RequestContext): Promise<{ success: true }> {
    await this.deps.settings.delete(ctx.appId);
    return { success: true };
  }
}
