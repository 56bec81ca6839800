import type { Database } from './db/database.js';
import type { SecretBox } from './domain/secret-box.js';
import type { UsersService } from './services/users.service.js';
import { MutesRepository } from './repositories/notifications/mutes.repository.js';
import { NotificationSettingsRepository } from './repositories/notifications/notification-settings.repository.js';
import { UserPreferencesRepository } from './repositories/notifications/preferences.repository.js';
import { ContactDetailsService } from './services/notifications/contact-details.service.js';
import { MutesService } from './services/notifications/mutes.service.js';
import { NotificationSettingsService } from './services/notifications/notification-settings.service.js';
import { PreferencesService } from './services/notifications/preferences.service.js';
import { NotificationLogRepository } from './repositories/notifications/notification-log.repository.js';
import { PushTokensRepository } from './repositories/notifications/push-tokens.repository.js';
import { NotificationLogService } from './services/notifications/notification-log.service.js';
import { PushTokensService } from './services/notifications/push-tokens.service.js';
import { ChannelProvidersRepository } from './repositories/notifications/channel-providers.repository.js';
import { PushProvidersRepository } from './repositories/notifications/push-providers.repository.js';
import { PushProvidersService } from './services/notifications/push-providers.service.js';
import { ChannelProvidersService } from './services/notifications/channel-providers.service.js';

/**
 * Notifications' part of the composition root (docs/notifications.md): the app's settings and
 * providers (push, SMS, e-mail; their secrets sealed by `secrets`), users' preferences, push
 * tokens, mutes, time zones and contact details, and the notification log. container.ts calls it
 * once.
 */
export function createNotifications(
  database: Database,
  deps: {
    /** Seals provider secrets at rest (PARLEY_SECRET_KEY). */
    secrets: SecretBox;
    users: UsersService;
    /** PARLEY_WEBHOOK_ALLOW_PRIVATE: provider URLs may be http and private or loopback hosts. */
    allowPrivate: boolean;
  },
) {
  const db = database.db;

  // Who is notified and when: settings, preferences, mutes, time zone, contact details.
  // The app's settings (the defaults until it sets any); users' own values, time zones and contact
  // details; their muted conversations. The delivery engine reads notificationSettings.get and
  // notificationPreferences.recipients, and decides with domain/notifications/preferences.ts.
  const notificationSettings = new NotificationSettingsService({ db, settings: new NotificationSettingsRepository(db) });
  const userPreferenceRows = new UserPreferencesRepository(db);
  const notificationPreferences = new PreferencesService({ preferences: userPreferenceRows, settings: notificationSettings, users: deps.users });
  const notificationMutes = new MutesService({ db, mutes: new MutesRepository(db), users: deps.users });
  const notificationContactDetails = new ContactDetailsService({ preferences: userPreferenceRows, users: deps.users });

  // Push providers (FCM, APNs).
  // FCM and APNs providers, their keys sealed; forDelivery opens them for the delivery engine.
  const pushProviders = new PushProvidersService({ db, providers: new PushProvidersRepository(db), secrets: deps.secrets });

  // SMS and e-mail providers (Twilio, SendGrid) and the custom providers of each channel, their
  // secrets sealed; forDelivery opens them for the delivery engine.
  const channelProviders = new ChannelProvidersService({
    db,
    providers: new ChannelProvidersRepository(db),
    secrets: deps.secrets,
    allowPrivate: deps.allowPrivate,
  });

  // Push tokens and the notification log.
  // Users' push tokens, named by their auth tokens (gone with them: the foreign key's cascade); the
  // delivery engine reads them with tokensOf and drops the ones providers refuse with removeInvalid.
  const pushTokenRows = new PushTokensRepository(db);
  const pushTokens = new PushTokensService({ db, pushTokens: pushTokenRows });
  // The notification log: the engine records its entries (notificationLogRows.record, many per
  // statement); the retention deletes old ones (deleteOlderThan).
  const notificationLogRows = new NotificationLogRepository(db);
  const notificationLog = new NotificationLogService({ log: notificationLogRows });

  return {
    services: {
      notificationSettings,
      notificationPreferences,
      notificationMutes,
      notificationContactDetails,
      pushProviders,
      channelProviders,
      pushTokens,
      notificationLog,
    },
  };
}
