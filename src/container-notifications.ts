import type { Database } from './db/database.js';
import type { Executor } from './db/transaction.js';
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
import type { RetrySchedule } from './domain/webhooks.js';
import { EventQueueRepository } from './repositories/events/event-queue.repository.js';
import { DeliveryLogRepository } from './repositories/events/delivery-log.repository.js';
import type { RetainedLog } from './services/event-retention.js';
import { NOTIFICATIONS_QUEUE } from './repositories/events/notification-queue.js';
import { coalesced } from './db/batcher.js';
import { NotificationSendsRepository } from './repositories/notifications/notification-sends.repository.js';
import { NotificationsConsumer } from './services/events/notifications.consumer.js';
import { ApnsClient } from './services/notifications/providers/apns.js';
import { CustomProviderClient } from './services/notifications/providers/custom.js';
import { FcmClient } from './services/notifications/providers/fcm.js';
import { SendGridClient } from './services/notifications/providers/sendgrid.js';
import { TwilioClient } from './services/notifications/providers/twilio.js';
import { ConversationStatesRepository } from './repositories/conversation-states.repository.js';
import { DigestCountsRepository } from './repositories/notifications/digest-counts.repository.js';
import { NotificationDigests } from './services/events/notification-digests.js';
import { GroupsRepository } from './repositories/groups.repository.js';
import { MessagesRepository } from './repositories/messages.repository.js';
import { UsersRepository } from './repositories/users.repository.js';

/** Where the providers are, when not theirs (tests' local fakes). */
export interface NotificationEndpoints {
  fcmUrl?: string;
  /** Origins a service account's token_uri may name. */
  fcmTokenOrigins?: string[];
  apnsUrl?: string;
  /** A certificate to trust for apnsUrl. */
  apnsCa?: string;
  /** SendGrid's API origin (https://api.sendgrid.com by default). */
  sendGridUrl?: string;
  /** Twilio's API origin (https://api.twilio.com by default). */
  twilioUrl?: string;
}

/** The time a provider has to answer one send. */
const PROVIDER_TIMEOUT_MS = 10_000;

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
    /** When failed sends are tried again (the webhooks' schedule). */
    retry: RetrySchedule;
    /** Where the providers are (tests point them at local fakes); theirs by default. */
    endpoints?: NotificationEndpoints;
  },
) {
  const db = database.db;
  // An app's notifications start from the event log's end when it adds its first provider (push,
  // e-mail or SMS; in that transaction): what is sent after it is notified, not the log's past.
  // A channel left with no provider (removed, disabled) drops what it still owes, so adding one
  // back later does not send notifications of long ago.
  const notificationQueue = new EventQueueRepository(db, NOTIFICATIONS_QUEUE);
  const syncDelivery = async (appId: string, tx: Executor) => {
    await notificationQueue.startCursor(appId, tx);
    await notificationQueue.dropGoneTargets(appId, tx);
  };

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
  const pushProviders = new PushProvidersService({ db, providers: new PushProvidersRepository(db), secrets: deps.secrets, allowPrivate: deps.allowPrivate, syncDelivery });

  // SMS and e-mail providers (Twilio, SendGrid) and the custom providers of each channel, their
  // secrets sealed; forDelivery opens them for the delivery engine.
  const channelProviders = new ChannelProvidersService({
    db,
    providers: new ChannelProvidersRepository(db),
    secrets: deps.secrets,
    allowPrivate: deps.allowPrivate,
    syncDelivery,
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

  // Delivery (docs/notifications.md): a consumer of the event log, on the consumers' own
  // connections, with one client of each provider's protocol for the process.
  const consumerDb = database.consumerDb;
  const consumerPreferences = new UserPreferencesRepository(consumerDb);
  const consumerSettings = new NotificationSettingsService({ db: consumerDb, settings: new NotificationSettingsRepository(consumerDb) });
  const endpoints = deps.endpoints ?? {};
  const consumerChannelProviders = new ChannelProvidersService({ db: consumerDb, providers: new ChannelProvidersRepository(consumerDb), secrets: deps.secrets, allowPrivate: deps.allowPrivate });
  const consumerSends = new NotificationSendsRepository(consumerDb);
  const consumerLog = new NotificationLogRepository(consumerDb);
  const consumerRecipients = new PreferencesService({ preferences: consumerPreferences, settings: consumerSettings, users: deps.users });
  // E-mail and SMS (the `email` and `sms` targets): digests of a recipient's unread messages of a
  // conversation, through SendGrid, Twilio and the custom providers.
  const digests = new NotificationDigests({
    settings: consumerSettings,
    preferences: consumerRecipients,
    channelProviders: consumerChannelProviders,
    states: new ConversationStatesRepository(consumerDb),
    users: new UsersRepository(consumerDb),
    counts: new DigestCountsRepository(consumerDb),
    sends: consumerSends,
    log: consumerLog,
    sendGrid: new SendGridClient({ timeoutMs: PROVIDER_TIMEOUT_MS, ...(endpoints.sendGridUrl ? { baseUrl: endpoints.sendGridUrl } : {}) }),
    twilio: new TwilioClient({ timeoutMs: PROVIDER_TIMEOUT_MS, ...(endpoints.twilioUrl ? { baseUrl: endpoints.twilioUrl } : {}) }),
    custom: new CustomProviderClient({ allowPrivate: deps.allowPrivate, timeoutMs: PROVIDER_TIMEOUT_MS }),
  });
  const consumer = new NotificationsConsumer({
    queue: new EventQueueRepository(consumerDb, NOTIFICATIONS_QUEUE),
    settings: consumerSettings,
    preferences: consumerRecipients,
    tokens: new PushTokensRepository(consumerDb),
    pushProviders: new PushProvidersService({ db: consumerDb, providers: new PushProvidersRepository(consumerDb), secrets: deps.secrets, allowPrivate: deps.allowPrivate }),
    channelProviders: consumerChannelProviders,
    sends: consumerSends,
    // Each send is claimed right before it goes out; the claims of the sends of the moment (a
    // round's lanes side by side) are one statement.
    claimSend: coalesced((items: Array<{ appId: string; eventId: string; key: string }>) => consumerSends.claimMany(items), { maxBatch: 500, maxInFlight: 2 }),
    log: consumerLog,
    fcm: new FcmClient({
      timeoutMs: PROVIDER_TIMEOUT_MS,
      ...(endpoints.fcmUrl ? { baseUrl: endpoints.fcmUrl } : {}),
      ...(endpoints.fcmTokenOrigins ? { trustedTokenOrigins: endpoints.fcmTokenOrigins } : {}),
    }),
    apns: new ApnsClient({
      timeoutMs: PROVIDER_TIMEOUT_MS,
      ...(endpoints.apnsUrl ? { productionUrl: endpoints.apnsUrl, sandboxUrl: endpoints.apnsUrl } : {}),
      ...(endpoints.apnsCa ? { ca: endpoints.apnsCa } : {}),
    }),
    custom: new CustomProviderClient({ allowPrivate: deps.allowPrivate, timeoutMs: PROVIDER_TIMEOUT_MS }),
    // A reaction's notice names the message reacted to, and its group or users.
    reads: { messages: new MessagesRepository(consumerDb), groups: new GroupsRepository(consumerDb), users: new UsersRepository(consumerDb) },
    retry: deps.retry,
    timeoutMs: PROVIDER_TIMEOUT_MS,
    // Per app, 64 recipients' lanes at once (256 while its providers answer quickly): one app's
    // large group takes its share, not the process's.
    // New events wait 50 ms for others before their fan-out, so that a step and a round take many
    // at once: a push notification 50 ms later, for fewer statements a delivery. A fan-out still
    // going after 250 ms (a message to a huge group) gets a second beside it for the other apps.
    limits: { lanesPerTarget: 64, lanesPerAnsweringTarget: 256, quickAnswerMs: 1_000, answeringForMs: 60_000, perRound: 20, fanOutPerApp: 1_000, gatherMs: 50, spareFanOutAfterMs: 250 },
    channels: digests,
  });

  // Kept as long as the events (EventRetention): the notifications' deliveries, what each event
  // was sent to, and the notification log.
  const deliveryLog = new DeliveryLogRepository(db, NOTIFICATIONS_QUEUE);
  const sends = new NotificationSendsRepository(db);
  const retained: RetainedLog[] = [
    { apps: () => notificationQueue.appsWithCursors(), deleteBefore: (appId, cutoff, batch) => deliveryLog.deleteSettledBefore(appId, cutoff, batch) },
    { apps: () => notificationQueue.appsWithCursors(), deleteBefore: (appId, cutoff, batch) => sends.deleteOlderThan(appId, cutoff, batch) },
    { apps: () => notificationLogRows.appsWithEntries(), deleteBefore: (appId, cutoff, batch) => notificationLogRows.deleteOlderThan(appId, cutoff, batch) },
  ];

  return {
    consumer,
    retained,
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
