import { ForeignKeyViolation } from '../../db/driver-errors.js';
import type { RequestContext } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import { userValueEntries, userValuesFromEntries, userValuesFromPatch, type UserPreferencesPatch } from '../../domain/notifications/preferences-input.js';
import {
  canonicalTimeZone,
  effectivePreferences,
  type AppNotificationSettings,
  type ConversationType,
  type EffectivePreferences,
  type RecipientPreferences,
} from '../../domain/notifications/preferences.js';
import type { UserPreferencesRepository } from '../../repositories/notifications/preferences.repository.js';
import { uidNotFound, type UsersService } from '../users.service.js';
import type { NotificationSettingsService } from './notification-settings.service.js';
import { resetPreferencesView, userPreferencesView, type ResetPreferencesView, type UserPreferencesView } from './preferences-views.js';

export type { UserPreferencesPatch };

/** One recipient as the delivery engine gets them (PreferencesService.recipients). */
export interface NotificationRecipient extends RecipientPreferences {
  uid: string;
  email: string | null;
  phone: string | null;
}

/** A time zone unset is UTC. */
const DEFAULT_TIME_ZONE = 'UTC';

/**
 * A user's notification preferences (notifications-push-*-preferences) and time zone
 * (notifications-*-timezone), and what the delivery engine reads of its recipients. What applies
 * to a user is the app's settings with the user's values where the app lets users override them.
 */
export class PreferencesService {
  constructor(
    private readonly deps: {
      preferences: UserPreferencesRepository;
      settings: Pick<NotificationSettingsService, 'get'>;
      users: Pick<UsersService, 'requireActive'>;
    },
  ) {}

  /** notifications-push-list-preferences. */
  async get(ctx: RequestContext, rawUid: string): Promise<UserPreferencesView> {
    const { uid } = await this.deps.users.requireActive(ctx, rawUid);
    const [app, row] = await Promise.all([this.deps.settings.get(ctx), this.deps.preferences.get(ctx.appId, uid)]);
    return userPreferencesView(effectivePreferences(app, userValuesFromEntries(row?.preferences)), app);
  }

  /**
   * notifications-push-update-preferences: the values given that the app lets users override are
   * kept (the others are left out, as the vendor does, with no error); answers what applies after.
   */
  async update(ctx: RequestContext, rawUid: string, patch: UserPreferencesPatch): Promise<UserPreferencesView> {
    const { uid } = await this.deps.users.requireActive(ctx, rawUid);
    const app = await this.deps.settings.get(ctx);
    const { values, problems } = userValuesFromPatch(patch, app);
    if (Object.keys(problems).length > 0) throw badRequest(problems);
    const entries = userValueEntries(values);
    const stored =
      Object.keys(entries).length > 0
        ? await this.mapMissingUser(uid, () => this.deps.preferences.mergeValues(ctx.appId, uid, entries))
        : (await this.deps.preferences.get(ctx.appId, uid))?.preferences;
    return userPreferencesView(effectivePreferences(app, userValuesFromEntries(stored)), app);
  }

  /** notifications-push-reset-preferences: the user's own values forgotten; answers what applies (the app's), in the vendor's names of a change. */
  async reset(ctx: RequestContext, rawUid: string): Promise<ResetPreferencesView> {
    const { uid } = await this.deps.users.requireActive(ctx, rawUid);
    await this.deps.preferences.resetValues(ctx.appId, uid);
    return resetPreferencesView(effectivePreferences(await this.deps.settings.get(ctx), undefined));
  }

  /** notifications-get-timezone: UTC until the user sets one. */
  async getTimezone(ctx: RequestContext, rawUid: string): Promise<{ timezone: string }> {
    const { uid } = await this.deps.users.requireActive(ctx, rawUid);
    const row = await this.deps.preferences.get(ctx.appId, uid);
    return { timezone: row?.timezone ?? DEFAULT_TIME_ZONE };
  }

  /** notifications-update-timezone: an IANA name (any case; kept as Intl spells it), else ERR_BAD_REQUEST. */
  async updateTimezone(ctx: RequestContext, rawUid: string, name: string): Promise<{ timezone: string }> {
    const timezone = canonicalTimeZone(name);
    if (timezone === undefined) throw badRequest({ timezone: 'must be an IANA time zone name, e.g. Asia/Tokyo' });
    const { uid } = await this.deps.users.requireActive(ctx, rawUid);
    await this.mapMissingUser(uid, () => this.deps.preferences.setTimezone(ctx.appId, uid, timezone));
    return { timezone };
  }

  /**
   * For the delivery engine: of `uids` (normalised; a few thousand at a time), the app's active
   * users with what applies to them, their time zone, whether they muted `conversation` (a 1:1
   * conversation names the other user, the sender; a group its guid) with a mute still on at `at`,
   * and their contact details. Two statements: the app's settings, then every recipient in one.
   * Users not there, or deactivated, are left out of the map.
   */
  async recipients(
    ctx: RequestContext,
    uids: readonly string[],
    conversation: { type: ConversationType; id: string },
    at: Date = new Date(),
    /** The app's settings, when the caller has just read them (a round of many conversations reads them once). */
    settings?: AppNotificationSettings,
  ): Promise<Map<string, NotificationRecipient>> {
    const app = settings ?? (await this.deps.settings.get(ctx));
    const rows = await this.deps.preferences.recipients(ctx.appId, uids, conversation, at);
    const recipients = new Map<string, NotificationRecipient>();
    for (const row of rows) {
      const preferences: EffectivePreferences = effectivePreferences(app, userValuesFromEntries(row.preferences));
      recipients.set(row.uid, { uid: row.uid, preferences, timeZone: row.timezone, muted: row.muted, email: row.email, phone: row.phone });
    }
    return recipients;
  }

  /**
   * recipients for a round of deliveries of many conversations, in one read: per conversation
   * (conversationKeyOf), its recipients among `wanted`.
   */
  async recipientsIn(
    ctx: RequestContext,
    wanted: ReadonlyArray<{ uid: string; conversation: { type: ConversationType; id: string } }>,
    at: Date,
    settings: AppNotificationSettings,
  ): Promise<Map<string, Map<string, NotificationRecipient>>> {
    const byConversation = new Map<string, Map<string, NotificationRecipient>>();
    for (const row of await this.deps.preferences.recipientsIn(ctx.appId, dedupe(wanted), at)) {
      const preferences: EffectivePreferences = effectivePreferences(settings, userValuesFromEntries(row.preferences));
      const key = conversationKeyOf(row.conversation);
      const recipients = byConversation.get(key) ?? new Map<string, NotificationRecipient>();
      recipients.set(row.uid, { uid: row.uid, preferences, timeZone: row.timezone, muted: row.muted, email: row.email, phone: row.phone });
      byConversation.set(key, recipients);
    }
    return byConversation;
  }

  /** The write, with a user deleted since they were read answered ERR_UID_NOT_FOUND. */
  private async mapMissingUser<T>(uid: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof ForeignKeyViolation) throw uidNotFound(uid);
      throw error;
    }
  }
}

/** A conversation as recipientsIn keys it: its type and id (the group, or the other user of a 1:1). */
export function conversationKeyOf(conversation: { type: ConversationType; id: string }): string {
  return `${conversation.type}:${conversation.id}`;
}

/** Each user and conversation once. */
function dedupe<T extends { uid: string; conversation: { type: ConversationType; id: string } }>(wanted: readonly T[]): T[] {
  const seen = new Map<string, T>();
  for (const w of wanted) seen.set(`${w.uid}\u0000${conversationKeyOf(w.conversation)}`, w);
  return [...seen.values()];
}
