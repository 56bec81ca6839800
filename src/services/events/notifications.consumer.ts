import { silentLogger, type RequestContext } from '../../domain/context.js';
import { extended } from '../../domain/objects.js';
import type { NotificationDetails } from '../../domain/notifications/payload.js';
import { skipReasonOf, type NotificationLogEntry } from '../../domain/notifications/log.js';
import { notificationSkipReason, type AppNotificationSettings, type ConversationType } from '../../domain/notifications/preferences.js';
import { providerFor, type PushProvidersForDelivery } from '../../domain/notifications/push-providers.js';
import type { PushTarget } from '../../domain/notifications/push-tokens.js';
import type { RetrySchedule } from '../../domain/webhooks.js';
import type { EventQueueRepository, PendingDelivery } from '../../repositories/events/event-queue.repository.js';
import { PUSH_TARGET } from '../../repositories/events/notification-queue.js';
import type { NotificationLogRepository } from '../../repositories/notifications/notification-log.repository.js';
import type { NotificationSendsRepository } from '../../repositories/notifications/notification-sends.repository.js';
import type { PushTokensRepository } from '../../repositories/notifications/push-tokens.repository.js';
import type { RenderedEvent } from '../event-payloads.js';
import type { ChannelProvidersService, CustomProviderForDelivery } from '../notifications/channel-providers.service.js';
import type { NotificationSettingsService } from '../notifications/notification-settings.service.js';
import { conversationKeyOf, type NotificationRecipient, type PreferencesService } from '../notifications/preferences.service.js';
import type { PushProvidersService } from '../notifications/push-providers.service.js';
import type { ApnsClient } from '../notifications/providers/apns.js';
import type { CustomProviderClient } from '../notifications/providers/custom.js';
import type { FcmClient } from '../notifications/providers/fcm.js';
import type { DeliveryResult } from '../notifications/providers/types.js';
import type { AttemptResult, ConsumerLimits, EventConsumer, RoundTarget } from './consumer.js';
import { noticesOf, retriedAttempt, type NoticeReads, type PushNotice } from './notification-push-events.js';

/** A channel's rounds other than push's (one consumer, one dispatcher: NotificationsConsumer.open hands them over). */
export interface ChannelTargets {
  open(appId: string, target: string): Promise<RoundTarget | undefined>;
  close(): void;
}

/** What a round of one app's push deliveries reads once (see prepare). */
interface Round {
  ctx: RequestContext;
  settings: AppNotificationSettings;
  providers: PushProvidersForDelivery;
  custom: CustomProviderForDelivery | undefined;
  /** Per event id, what it notifies. */
  notices: Map<string, PushNotice>;
  /** Per conversation key (type and id as the recipient sees it), its recipients. */
  recipients: Map<string, Map<string, NotificationRecipient>>;
  tokens: Map<string, PushTarget[]>;
  /** The log's entries of the round's attempts, recorded together when it finishes. */
  entries: NotificationLogEntry[];
}

/**
 * Notifications as a consumer of the event log (docs/notifications.md): a delivery is one
 * event's notification to one recipient (NOTIFICATIONS_QUEUE): a new message, an edit or delete,
 * a reaction or a group action (notification-push-events.ts). An attempt decides with the
 * recipient's preferences (what they want, muted conversations, do not disturb and their
 * schedule in their time zone), then sends to each of their device tokens through its provider
 * (FCM, APNs) and to the app's custom push provider, each once (NotificationSendsRepository),
 * logging every notification, sent or not. A token the provider says is gone is removed; a send
 * that failed in passing makes the attempt fail, to be retried for the tokens it did not reach.
 */
export class NotificationsConsumer implements EventConsumer {
  readonly queue: EventQueueRepository;
  readonly limits: ConsumerLimits;
  readonly retry: RetrySchedule;
  readonly attemptTimeoutMs: number;

  constructor(
    private readonly deps: {
      queue: EventQueueRepository;
      settings: NotificationSettingsService;
      preferences: PreferencesService;
      tokens: PushTokensRepository;
      pushProviders: PushProvidersService;
      channelProviders: ChannelProvidersService;
      /** Forgets a claim whose send is to be tried again. */
      sends: Pick<NotificationSendsRepository, 'release'>;
      /** Claims a send, once per event and key (NotificationSendsRepository.claimMany, coalesced). */
      claimSend: (item: { appId: string; eventId: string; key: string }) => Promise<boolean>;
      log: NotificationLogRepository;
      fcm: FcmClient;
      apns: ApnsClient;
      custom: CustomProviderClient;
      retry: RetrySchedule;
      /** The longest one provider's send may take. */
      timeoutMs: number;
      limits: ConsumerLimits;
      /** The other channels' targets (e-mail, SMS): their rounds, when the app has them. */
      channels?: ChannelTargets;
      /** What notices of reactions read (the message reacted to, its group or users). */
      reads: NoticeReads;
    },
  ) {
    this.queue = deps.queue;
    this.limits = deps.limits;
    this.retry = deps.retry;
    // An attempt sends to each of a recipient's tokens in turn (at most a few).
    this.attemptTimeoutMs = deps.timeoutMs * 4;
  }

  async open(appId: string, target: string): Promise<RoundTarget | undefined> {
    if (target !== PUSH_TARGET) return this.deps.channels?.open(appId, target);
    let round: Round | undefined;
    return {
      prepare: async (items) => {
        round = await this.prepare(appId, items);
      },
      attempt: async (delivery, event) => this.attempt(round!, delivery, event),
      // One statement for the round's log (a crash before it loses those entries, not a send).
      finish: async () => {
        if (round && round.entries.length > 0) await this.deps.log.record(appId, round.entries);
      },
    };
  }

  close(): void {
    this.deps.fcm.close();
    this.deps.apns.close();
    this.deps.custom.close();
    this.deps.channels?.close();
  }

  /** The app's settings and providers, and every recipient's preferences and tokens, for a round. */
  private async prepare(appId: string, items: ReadonlyArray<{ delivery: PendingDelivery; event: RenderedEvent }>): Promise<Round> {
    const ctx: RequestContext = { appId, requestId: 'notifications', log: silentLogger };
    const [settings, providers, custom] = await Promise.all([this.deps.settings.get(ctx), this.deps.pushProviders.forDelivery(ctx), this.deps.channelProviders.customForDelivery(ctx, 'push')]);
    const notices = await noticesOf(appId, items, this.deps.reads);
    const wanted: Array<{ uid: string; conversation: { type: ConversationType; id: string } }> = [];
    for (const { delivery, event } of items) {
      const notice = notices.get(event.id);
      if (notice) wanted.push({ uid: delivery.item, conversation: notice.conversation(delivery.item) });
    }
    const recipients = await this.deps.preferences.recipientsIn(ctx, wanted, new Date(), settings);
    const uids = [...new Set(items.map((item) => item.delivery.item))];
    const tokens = await this.deps.tokens.tokensOf(appId, uids);
    return { ctx, settings, providers, custom, notices, recipients, tokens, entries: [] };
  }

  /** One event's notification to one recipient: decided, then sent to each of their tokens once. */
  private async attempt(round: Round, delivery: PendingDelivery, event: RenderedEvent): Promise<AttemptResult> {
    const started = Date.now();
    const notice = round.notices.get(event.id);
    const uid = delivery.item;
    if (!notice) return { ok: true, status: null, error: 'not a notified event', retry: false };
    const conversation = notice.conversation(uid);
    const recipient = round.recipients.get(conversationKeyOf(conversation))?.get(uid);
    // Deactivated or deleted since: nobody to notify.
    if (!recipient) return { ok: true, status: null, error: 'the recipient no longer exists', retry: false };
    const base = extended({ processingStartedAtMS: started, channel: 'push' as const }, notice.fields(uid));
    const entries: NotificationLogEntry[] = [];
    const decided = notice.event(uid);
    const skip = notificationSkipReason(recipient, decided, new Date());
    if (skip) {
      entries.push(extended(base, { processingEndedAtMS: Date.now(), notificationTriggered: false as const, reason: skipReasonOf(skip, decided.kind) }));
      round.entries.push(...entries);
      return { ok: true, status: null, error: null, retry: false };
    }
    const details = notice.details(recipient, round.settings);
    let again: DeliveryResult | undefined;
    const sent = async (
      key: string,
      send: () => Promise<{ result: DeliveryResult; entry: Omit<NotificationLogEntry, 'notificationTriggered' | 'processingStartedAtMS' | 'processingEndedAtMS' | 'success' | 'reason'> }>,
    ) => {
      if (!(await this.deps.claimSend({ appId: round.ctx.appId, eventId: delivery.event_id, key }))) return;
      const at = Date.now();
      const { result, entry } = await send();
      // Tried again only when the provider answered that it did not take it (429, 5xx): one that
      // timed out may have, and a token gets an event at most once.
      if (result.outcome === 'retry' && result.status !== null) {
        await this.deps.sends.release(round.ctx.appId, delivery.event_id, key);
        again = result;
      }
      const failure = result.outcome === 'delivered' ? {} : { error: result.error ?? result.outcome };
      entries.push(Object.assign({}, entry, { processingStartedAtMS: at, processingEndedAtMS: Date.now(), notificationTriggered: true as const, success: result.outcome === 'delivered' }, failure));
    };
    for (const token of (round.tokens.get(uid) ?? []).filter((t) => t.tokenType === 'chat')) {
      const list = token.kind === 'fcm' ? round.providers.fcm : round.providers.apns;
      const provider = providerFor<(typeof list)[number]>(list, token.providerId ?? undefined);
      const tokenBase = extended(base, { provider: token.kind, tokenType: token.platform, pushToken: token.token });
      if (!provider) {
        entries.push(
          extended(tokenBase, {
            processingEndedAtMS: Date.now(),
            notificationTriggered: false as const,
            reason: 'INVALID_PUSH_PROVIDER_ID' as const,
            ...(token.providerId ? { providerId: token.providerId } : {}),
          }),
        );
        continue;
      }
      await sent(token.token, async () => {
        const result =
          provider.kind === 'fcm'
            ? await this.deps.fcm.send(provider.serviceAccount, fcmMessage(token, details, notice.messageId, provider.notificationInPayload[platformFamily(token.platform)].chat))
            : await this.deps.apns.send(
                { keyId: provider.keyId, teamId: provider.teamId, bundleId: provider.bundleId, privateKey: provider.p8Key, production: provider.productionMode },
                {
                  deviceToken: token.token,
                  pushType: 'alert',
                  alert: { title: details.title, body: details.body },
                  sound: 'default',
                  threadId: details.conversationId,
                  ...(provider.includeContentAvailable ? { contentAvailable: true } : {}),
                  ...(provider.includeMutableContent ? { mutableContent: true } : {}),
                  custom: { notificationDetails: details },
                },
              );
        if (result.outcome === 'invalid-recipient') await this.deps.tokens.removeInvalid(round.ctx.appId, token.token, token.updatedAt);
        return { result, entry: extended(tokenBase, { providerId: provider.providerId, payload: { title: details.title, body: details.body } }) };
      });
    }
    const custom = round.custom;
    if (custom) {
      // Once per recipient (the vendor's one request per recipient), whatever their tokens.
      await sent(`custom:${uid}`, async () => ({
        result: await this.deps.custom.send(
          { url: custom.url, signingSecrets: custom.signingSecrets, ...(custom.basicAuth ? { basicAuth: custom.basicAuth } : {}) },
          'push',
          { to: { uid }, notificationDetails: extended(details, { message: event.payload.data as Record<string, unknown> }) },
          { id: delivery.id, attempt: delivery.attempts + 1 },
        ),
        entry: extended(base, { provider: 'custom' as const, payload: { title: details.title, body: details.body } }),
      }));
    }
    round.entries.push(...entries);
    const retry = again as DeliveryResult | undefined;
    if (retry) return retriedAttempt(retry);
    return { ok: true, status: null, error: null, retry: false };
  }
}

function platformFamily(platform: string): 'ios' | 'android' | 'web' {
  return platform.includes('ios') ? 'ios' : platform.includes('web') ? 'web' : 'android';
}

/** An FCM v1 message: the details as data (strings), and FCM's `notification` when the provider asks for it on the platform. */
function fcmMessage(token: PushTarget, details: NotificationDetails, messageId: string | undefined, withNotification: boolean) {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(details)) data[key] = String(value);
  if (messageId !== undefined) data.messageId = messageId;
  return {
    token: token.token,
    data,
    ...(withNotification ? { notification: { title: details.title, body: details.body } } : {}),
    android: { priority: 'high', collapse_key: details.tag },
  };
}
