import { silentLogger, type RequestContext } from '../../domain/context.js';
import { extended } from '../../domain/objects.js';
import { digestOf, type DigestChannel, type DigestContent } from '../../domain/notifications/digest.js';
import { skipReasonOf, type NotificationLogEntry, type NotificationLogReason } from '../../domain/notifications/log.js';
import { messageKind, mentions, type NotifiedMessage } from '../../domain/notifications/payload.js';
import { notificationSkipReason, type AppNotificationSettings, type ConversationType } from '../../domain/notifications/preferences.js';
import type { ConversationStatesRepository } from '../../repositories/conversation-states.repository.js';
import type { PendingDelivery } from '../../repositories/events/event-queue.repository.js';
import { DIGEST_CHANNELS } from '../../repositories/events/notification-queue.js';
import type { DigestCountsRepository, DigestRoute } from '../../repositories/notifications/digest-counts.repository.js';
import type { NotificationLogRepository } from '../../repositories/notifications/notification-log.repository.js';
import type { NotificationSendsRepository } from '../../repositories/notifications/notification-sends.repository.js';
import type { UsersRepository } from '../../repositories/users.repository.js';
import type { RenderedEvent } from '../event-payloads.js';
import type { CustomProviderForDelivery, SendGridForDelivery, TwilioForDelivery } from '../notifications/channel-providers-delivery.js';
import type { ChannelProvidersService } from '../notifications/channel-providers.service.js';
import type { NotificationSettingsService } from '../notifications/notification-settings.service.js';
import { conversationKeyOf, type NotificationRecipient, type PreferencesService } from '../notifications/preferences.service.js';
import type { CustomProviderClient } from '../notifications/providers/custom.js';
import type { SendGridClient } from '../notifications/providers/sendgrid.js';
import type { TwilioClient } from '../notifications/providers/twilio.js';
import type { DeliveryResult } from '../notifications/providers/types.js';
import type { AttemptResult, RoundTarget } from './consumer.js';
import { messageFields, mutedConversationOf, retriedAttempt } from './notification-push-events.js';
import type { ChannelTargets } from './notifications.consumer.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** A provider of the channel, opened for delivery. */
type Provider = { kind: 'sendgrid'; account: SendGridForDelivery } | { kind: 'twilio'; account: TwilioForDelivery } | { kind: 'custom'; account: CustomProviderForDelivery };

/** One lane's deliveries of a round: one recipient's messages of one conversation, one digest. */
interface Digest {
  uid: string;
  /** The conversation's key (conversation_states names it so). */
  conversationKey: string;
  /** The conversation as the recipient's mutes name it: the group, or (1:1) the sender. */
  muteKey: { type: ConversationType; id: string };
  messages: Array<{ delivery: PendingDelivery; message: NotifiedMessage }>;
  /** The digest's attempt, made by the lane's first attempt of the round; the others answer what it did. */
  outcome?: Promise<AttemptResult>;
}

/** What a round of one app's channel reads once (see prepare). */
interface Round {
  ctx: RequestContext;
  channel: DigestChannel;
  settings: AppNotificationSettings;
  providers: Provider[];
  byDelivery: Map<string, Digest>;
  /** Per mute key, its recipients. */
  recipients: Map<string, Map<string, NotificationRecipient>>;
  /** Per recipient and conversation key, the last message they read. */
  readUpTo: Map<string, bigint>;
  names: Map<string, string>;
}

const NO_SEND = (error: string | null): AttemptResult => ({ ok: true, status: null, error, retry: false });

/**
 * E-mail and SMS notifications (docs/notifications.md, "E-mail and SMS"): the `email` and `sms`
 * targets of the notifications consumer. A lane is one recipient's conversation, due the app's
 * `intervalInSeconds` after its first message (DIGEST_DUE): the round's pending deliveries of a
 * lane are one digest, sent by the lane's first attempt; the others settle with what it did. The
 * digest leaves out what the recipient read since (notifyForUnreadOnly) and what their
 * preferences do not want; mutes and quiet hours stop it, and so do the caps (maxPerDay,
 * maxPerDayPerConversation: digests the provider took in the last 24 hours); SendGrid and Twilio
 * need the stored address, and so does a custom provider with useStoredEmailID / useStoredPhNo.
 * It goes to each of the channel's providers, each message at most once per provider
 * (NotificationSendsRepository), and every digest is logged, sent or not and why not.
 */
export class NotificationDigests implements ChannelTargets {
  /** Digests being sent from this process, per cap's key: counted with the log's until logged. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly deps: {
      settings: NotificationSettingsService;
      preferences: PreferencesService;
      channelProviders: ChannelProvidersService;
      states: ConversationStatesRepository;
      users: UsersRepository;
      counts: DigestCountsRepository;
      sends: NotificationSendsRepository;
      log: NotificationLogRepository;
      sendGrid: SendGridClient;
      twilio: TwilioClient;
      custom: CustomProviderClient;
    },
  ) {}

  async open(appId: string, target: string): Promise<RoundTarget | undefined> {
    const channel = DIGEST_CHANNELS.find((c) => c === target);
    if (!channel) return undefined;
    let round: Round | undefined;
    return {
      prepare: async (items) => {
        round = await this.prepare(appId, channel, items);
      },
      attempt: async (delivery) => {
        const digest = round?.byDelivery.get(delivery.id);
        if (!round || !digest) return NO_SEND('not a message event');
        digest.outcome ??= this.send(round, digest, delivery);
        return digest.outcome;
      },
    };
  }

  close(): void {
    this.deps.sendGrid.close();
    this.deps.twilio.close();
    this.deps.custom.close();
  }

  /** The app's settings and providers, and each digest's recipient, read state and name, for a round. */
  private async prepare(appId: string, channel: DigestChannel, items: ReadonlyArray<{ delivery: PendingDelivery; event: RenderedEvent }>): Promise<Round> {
    const ctx: RequestContext = { appId, requestId: 'notifications', log: silentLogger };
    const [settings, opened] = await Promise.all([this.deps.settings.get(ctx), this.deps.channelProviders.forDelivery(ctx)]);
    const providers: Provider[] = [];
    const own = opened[channel];
    if ('sendgrid' in own && own.sendgrid) providers.push({ kind: 'sendgrid', account: own.sendgrid });
    if ('twilio' in own && own.twilio) providers.push({ kind: 'twilio', account: own.twilio });
    if (own.custom) providers.push({ kind: 'custom', account: own.custom });
    const digests = new Map<string, Digest>();
    const byDelivery = new Map<string, Digest>();
    for (const { delivery, event } of items) {
      const message = (event.payload.data as { message?: NotifiedMessage } | undefined)?.message;
      if (!message) continue;
      const conversationKey = delivery.event?.conversation_id ?? message.conversationId;
      const key = `${delivery.item}/${conversationKey}`;
      let digest = digests.get(key);
      if (!digest) {
        digest = { uid: delivery.item, conversationKey, muteKey: mutedConversationOf(message), messages: [] };
        digests.set(key, digest);
      }
      digest.messages.push({ delivery, message });
      byDelivery.set(delivery.id, digest);
    }
    const recipients = await this.deps.preferences.recipientsIn(
      ctx,
      [...digests.values()].map((digest) => ({ uid: digest.uid, conversation: digest.muteKey })),
      new Date(),
      settings,
    );
    const pairs = [...digests.values()].map((digest) => ({ uid: digest.uid, conversationId: digest.conversationKey }));
    const [states, users] = await Promise.all([
      settings.preferences[channel].notifyForUnreadOnly ? this.deps.states.getMany(appId, pairs) : Promise.resolve([]),
      this.deps.users.getMany(appId, [...new Set(pairs.map((pair) => pair.uid))]),
    ]);
    const readUpTo = new Map<string, bigint>();
    for (const state of states) if (state.read_message_id !== null) readUpTo.set(`${state.uid}/${state.conversation_id}`, BigInt(state.read_message_id));
    const names = new Map(users.map((user) => [user.uid, user.name]));
    return { ctx, channel, settings, providers, byDelivery, recipients, readUpTo, names };
  }

  /** One digest: decided, then sent through each of the channel's providers, each message once per provider; logged. */
  private async send(round: Round, digest: Digest, head: PendingDelivery): Promise<AttemptResult> {
    const started = Date.now();
    const { channel, settings } = round;
    const appId = round.ctx.appId;
    const uid = digest.uid;
    const recipient = round.recipients.get(conversationKeyOf(digest.muteKey))?.get(uid);
    // Deactivated or deleted since: nobody to notify.
    if (!recipient) return NO_SEND('the recipient no longer exists');
    const caps = settings.preferences[channel];
    const read = round.readUpTo.get(`${uid}/${digest.conversationKey}`);
    const unread = digest.messages.filter(({ message }) => !caps.notifyForUnreadOnly || read === undefined || BigInt(message.id) > read);
    if (unread.length === 0) return NO_SEND('the recipient has read every message of the digest');
    const now = new Date();
    const wanted: typeof unread = [];
    let skipped: NotificationLogReason | undefined;
    for (const item of unread) {
      const kind = messageKind(item.message);
      const skip = notificationSkipReason(recipient, { conversationType: digest.muteKey.type, kind, mentioned: mentions(item.message, uid), ownMessage: false }, now);
      if (skip) skipped ??= skipReasonOf(skip, kind);
      else wanted.push(item);
    }
    const entries: NotificationLogEntry[] = [];
    if (wanted.length === 0) {
      entries.push(notSent(logBase(channel, unread[0]!.message, uid, started), skipped!));
      await this.deps.log.record(appId, entries);
      return NO_SEND(null);
    }
    const address = channel === 'email' ? recipient.email : recipient.phone;
    const conversation = digest.muteKey.type === 'group' ? { type: 'group' as const, id: digest.muteKey.id } : { type: 'user' as const, id: digest.muteKey.id };
    const reserved: string[] = [];
    let again: DeliveryResult | undefined;
    try {
      for (const provider of round.providers) {
        const at = Date.now();
        const route = { channel, provider: provider.kind } as DigestRoute;
        if (!address && (provider.kind !== 'custom' || provider.account.onlyStoredContact)) {
          const base = extended(logBase(channel, wanted[0]!.message, uid, at), { provider: provider.kind });
          entries.push(notSent(base, channel === 'email' ? 'MISSING_EMAIL' : 'MISSING_PHNO'));
          continue;
        }
        // Each message once per provider: what an earlier digest (or a process that died after sending) took is left out.
        const key = `${channel}:${provider.kind}:${uid}`;
        const claims = await this.deps.sends.claimMany(wanted.map((item) => ({ appId, eventId: item.delivery.event_id, key })));
        const claimed = wanted.filter((_, index) => claims[index]);
        if (claimed.length === 0) continue;
        const base = extended(logBase(channel, claimed[0]!.message, uid, at), { provider: provider.kind });
        const capKeys = [`${appId}/${key}`, `${appId}/${key}/${conversation.type}:${conversation.id}`];
        const sent = await this.deps.counts.sentSince(appId, route, uid, conversation, new Date(Date.now() - DAY_MS));
        if (sent.all + this.flying(capKeys[0]!) >= caps.maxPerDay || sent.conversation + this.flying(capKeys[1]!) >= caps.maxPerDayPerConversation) {
          entries.push(notSent(base, 'QUOTA_PREFERENCE'));
          continue;
        }
        for (const capKey of capKeys) {
          this.inFlight.set(capKey, this.flying(capKey) + 1);
          reserved.push(capKey);
        }
        const content = digestOf(
          settings,
          uid,
          claimed.map((item) => item.message),
          recipient.preferences.usePrivacyTemplate,
        );
        const result = await this.sendVia(provider, channel, { uid, name: round.names.get(uid), address: address ?? undefined }, content, head);
        // Tried again only when the provider answered that it did not take it (429, 5xx): one
        // that got no answer may have, and a message goes to a user at most once.
        if (result.outcome === 'retry' && result.status !== null) {
          for (const item of claimed) await this.deps.sends.release(appId, item.delivery.event_id, key);
          again = result;
        }
        const payload = extended(channel === 'email' ? { subject: content.subject, body: content.text } : { body: content.smsContent }, {
          messageIds: claimed.map((item) => String(item.message.id)),
        });
        const success = result.outcome === 'delivered';
        const outcome = { processingEndedAtMS: Date.now(), payload, notificationTriggered: true as const, success };
        entries.push(extended(base, success ? outcome : extended(outcome, { error: result.error ?? result.outcome })));
      }
      await this.deps.log.record(appId, entries);
    } finally {
      // Logged now (or not at all): the log's count has them.
      for (const capKey of reserved) {
        const left = this.flying(capKey) - 1;
        if (left > 0) this.inFlight.set(capKey, left);
        else this.inFlight.delete(capKey);
      }
    }
    const retry = again as DeliveryResult | undefined;
    if (retry) return retriedAttempt(retry);
    return NO_SEND(null);
  }

  private flying(key: string): number {
    return this.inFlight.get(key) ?? 0;
  }

  /** The digest through one provider: one request. */
  private async sendVia(
    provider: Provider,
    channel: DigestChannel,
    to: { uid: string; name: string | undefined; address: string | undefined },
    content: DigestContent,
    head: PendingDelivery,
  ): Promise<DeliveryResult> {
    const name = to.name !== undefined ? { name: to.name } : {};
    const group = content.groupDetails ? { groupDetails: content.groupDetails } : {};
    if (provider.kind === 'sendgrid') {
      const account = provider.account;
      return this.deps.sendGrid.send(
        {
          apiKey: account.apiKey,
          fromEmail: account.senderEmail,
          fromName: account.senderName,
          ...(account.templateId ? { templateId: account.templateId } : {}),
          ...(account.unsubscribeGroupId ? { unsubscribeGroupId: account.unsubscribeGroupId } : {}),
          ...(account.allowEmailReplies && account.replyToEmail ? { replyToEmail: account.replyToEmail } : {}),
        },
        {
          to: to.address!,
          ...(to.name !== undefined ? { toName: to.name } : {}),
          subject: content.subject,
          text: content.text,
          templateData: Object.assign({ to: Object.assign({ uid: to.uid }, name), messages: content.messages, senderDetails: content.senderDetails }, group),
        },
      );
    }
    if (provider.kind === 'twilio') {
      const { sender } = provider.account;
      return this.deps.twilio.send(
        {
          accountSid: provider.account.accountSid,
          authToken: provider.account.authToken,
          ...(sender.kind === 'phoneNumber' ? { from: sender.phoneNumber } : { messagingServiceSid: sender.messagingServiceSid }),
        },
        { to: to.address!, body: content.smsContent },
      );
    }
    const custom = provider.account;
    const target = { url: custom.url, signingSecrets: custom.signingSecrets, ...(custom.basicAuth ? { basicAuth: custom.basicAuth } : {}) };
    const delivery = { id: head.id, attempt: head.attempts + 1 };
    const common = Object.assign({ messages: content.messages, senderDetails: content.senderDetails }, group);
    if (channel === 'email') {
      const recipient = Object.assign({ uid: to.uid }, to.address !== undefined ? { email: to.address } : {}, name);
      return this.deps.custom.send(target, 'email', Object.assign({ to: recipient, subject: content.subject }, common), delivery);
    }
    const recipient = Object.assign({ uid: to.uid }, to.address !== undefined ? { phno: to.address } : {}, name);
    return this.deps.custom.send(target, 'sms', Object.assign({ to: recipient, smsContent: content.smsContent }, common), delivery);
  }
}

/** A log entry of a digest not sent, and why not. */
function notSent(base: ReturnType<typeof logBase> & { provider?: DigestRoute['provider'] }, reason: NotificationLogReason): NotificationLogEntry {
  return extended(base, { processingEndedAtMS: Date.now(), notificationTriggered: false as const, reason });
}

/** What every log entry of a digest says: the channel, and its first message (sender, receiver, member). */
function logBase(channel: DigestChannel, message: NotifiedMessage, uid: string, startedAtMs: number) {
  return extended({ processingStartedAtMS: startedAtMs, channel }, messageFields(message, 'after_message', uid));
}
