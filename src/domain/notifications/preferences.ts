/**
 * Who is notified and when (docs/notifications.md): the app's notification settings, a user's own
 * values, what applies to the user (the app's settings, with the user's values where the app lets
 * users override them), and the pure decisions the delivery engine makes for each recipient:
 * wantsNotification (the event preferences), isMuted (muted conversations), isQuietAt (do not
 * disturb, the weekly schedule in the user's time zone), and notificationSkipReason, all of them.
 *
 * The numbers are the vendor's: a `*Setting` of messages, replies and quoted replies is 1 don't
 * notify, 2 notify for all, 3 only when the user is mentioned; of reactions 1 don't notify,
 * 2 reactions to the user's own messages, 3 reactions to all messages; every other one (edits,
 * deletes, group actions, calls) 1 don't notify, 2 notify. `dndPreferenceSetting` 1 disables do
 * not disturb, 2 enables it.
 */
import { extended } from '../objects.js';
import { quietReason, WEEKDAYS, type DaySchedule, type QuietReason, type Weekday, type WeekSchedule } from './quiet-hours.js';

export { isQuietAt, quietReason, canonicalTimeZone, localClock, WEEKDAYS } from './quiet-hours.js';
export type { DaySchedule, QuietReason, Weekday, WeekSchedule } from './quiet-hours.js';

/** The group events of the app's settings (each `*Setting` with its "user may override" flag where the vendor has one). */
export interface GroupPreferences {
  messagesSetting: number;
  messagesOverride: boolean;
  repliesSetting: number;
  repliesOverride: boolean;
  quotedRepliesSetting: number;
  quotedRepliesOverride: boolean;
  reactionsSetting: number;
  reactionsOverride: boolean;
  memberLeftSetting: number;
  memberLeftOverride: boolean;
  memberAddedSetting: number;
  memberAddedOverride: boolean;
  memberJoinedSetting: number;
  memberJoinedOverride: boolean;
  memberKickedSetting: number;
  memberKickedOverride: boolean;
  memberBannedSetting: number;
  memberBannedOverride: boolean;
  memberUnbannedSetting: number;
  memberUnbannedOverride: boolean;
  memberScopeChangedSetting: number;
  memberScopeChangedOverride: boolean;
  messageEditedSetting: number;
  messageDeletedSetting: number;
}

export interface OneOnOnePreferences {
  messagesSetting: number;
  messagesOverride: boolean;
  repliesSetting: number;
  repliesOverride: boolean;
  quotedRepliesSetting: number;
  quotedRepliesOverride: boolean;
  reactionsSetting: number;
  reactionsOverride: boolean;
  messageEditedSetting: number;
  messageDeletedSetting: number;
}

export const CALL_EVENTS = ['initiated', 'ongoing', 'cancelled', 'rejected', 'unanswered', 'busy', 'ended'] as const;
export type CallEvent = (typeof CALL_EVENTS)[number];
export type CallPreferences = { [K in CallEvent as `${K}Setting`]: number } & { [K in CallEvent as `${K}Override`]: boolean };

export interface MutePreferences {
  dndPreferenceSetting: number;
  dndPreferenceOverride: boolean;
  schedulePreferenceSetting: WeekSchedule;
  schedulePreferenceOverride: boolean;
  /** Whether users' mutes of group conversations apply. */
  mutedGroupsOverride: boolean;
  /** Whether users' mutes of 1:1 conversations apply. */
  mutedOneOnOnesOverride: boolean;
}

/** E-mail and SMS: sent as digests of unread messages (the delivery engine's part). */
export interface DigestPreferences {
  notifyForUnreadOnly: boolean;
  intervalInSeconds: number;
  maxPerDay: number;
  maxPerDayPerConversation: number;
}

export interface PushPreferences {
  includeMessageObjectSetting: boolean;
  includeSenderMetadataSetting: boolean;
  includeReceiverMetadataSetting: boolean;
  trimTextFieldSetting: boolean;
  includeMessageMetadataSetting: boolean;
  customJson: Record<string, unknown>;
}

export interface AppPreferences {
  group: GroupPreferences;
  bypassPreferencesForMentions: boolean;
  call: CallPreferences;
  oneOnOne: OneOnOnePreferences;
  mute: MutePreferences;
  email: DigestPreferences;
  sms: DigestPreferences;
  push: PushPreferences;
}

export interface Sound {
  chat: string;
  call: string;
}

/** Templates: `usePrivacyTemplate` (1 default templates, 2 privacy templates, 3 default unless the user chooses privacy) and named templates of strings. */
export type Templates = { usePrivacyTemplate: number } & Record<string, number | Record<string, string>>;

/** An app's notification settings (notifications-push-list-settings). */
export interface AppNotificationSettings {
  preferences: AppPreferences;
  sound: Sound;
  templates: Templates;
}

/** The group settings a user may set (when the app lets them override it), and the app's flag that lets them. */
export const GROUP_USER_FIELDS = {
  messagesSetting: 'messagesOverride',
  repliesSetting: 'repliesOverride',
  quotedRepliesSetting: 'quotedRepliesOverride',
  reactionsSetting: 'reactionsOverride',
  memberLeftSetting: 'memberLeftOverride',
  memberAddedSetting: 'memberAddedOverride',
  memberJoinedSetting: 'memberJoinedOverride',
  memberKickedSetting: 'memberKickedOverride',
  memberBannedSetting: 'memberBannedOverride',
  memberUnbannedSetting: 'memberUnbannedOverride',
  memberScopeChangedSetting: 'memberScopeChangedOverride',
} as const satisfies Partial<Record<keyof GroupPreferences, keyof GroupPreferences>>;
export type GroupUserField = keyof typeof GROUP_USER_FIELDS;

export const ONE_ON_ONE_USER_FIELDS = {
  messagesSetting: 'messagesOverride',
  repliesSetting: 'repliesOverride',
  quotedRepliesSetting: 'quotedRepliesOverride',
  reactionsSetting: 'reactionsOverride',
} as const satisfies Partial<Record<keyof OneOnOnePreferences, keyof OneOnOnePreferences>>;
export type OneOnOneUserField = keyof typeof ONE_ON_ONE_USER_FIELDS;

/**
 * What a user set (sparse): kept whatever the app's override flags say when it was set, applied
 * only where they allow it (effectivePreferences).
 */
export interface UserPreferenceValues {
  group?: Partial<Record<GroupUserField, number>>;
  oneOnOne?: Partial<Record<OneOnOneUserField, number>>;
  dnd?: number;
  schedule?: Partial<Record<Weekday, Partial<DaySchedule>>>;
  usePrivacyTemplate?: boolean;
}

/** What applies to one user: the app's settings with the user's values where allowed. */
export interface EffectivePreferences {
  group: GroupPreferences;
  oneOnOne: OneOnOnePreferences;
  call: CallPreferences;
  mute: MutePreferences;
  bypassPreferencesForMentions: boolean;
  /** Whether the user's notifications use the privacy templates. */
  usePrivacyTemplate: boolean;
}

export function effectivePreferences(app: AppNotificationSettings, user: UserPreferenceValues | undefined): EffectivePreferences {
  const prefs = app.preferences;
  const group = { ...prefs.group };
  for (const [field, flag] of Object.entries(GROUP_USER_FIELDS) as Array<[GroupUserField, keyof GroupPreferences]>) {
    const value = user?.group?.[field];
    if (value !== undefined && prefs.group[flag] === true) group[field] = value;
  }
  const oneOnOne = { ...prefs.oneOnOne };
  for (const [field, flag] of Object.entries(ONE_ON_ONE_USER_FIELDS) as Array<[OneOnOneUserField, keyof OneOnOnePreferences]>) {
    const value = user?.oneOnOne?.[field];
    if (value !== undefined && prefs.oneOnOne[flag] === true) oneOnOne[field] = value;
  }
  const mute: MutePreferences = extended(prefs.mute, { schedulePreferenceSetting: { ...prefs.mute.schedulePreferenceSetting } });
  if (user?.dnd !== undefined && prefs.mute.dndPreferenceOverride) mute.dndPreferenceSetting = user.dnd;
  if (user?.schedule && prefs.mute.schedulePreferenceOverride) {
    for (const day of WEEKDAYS) {
      const own = user.schedule[day];
      if (own) mute.schedulePreferenceSetting[day] = Object.assign({}, mute.schedulePreferenceSetting[day], own);
    }
  }
  const privacy = app.templates.usePrivacyTemplate;
  return {
    group,
    oneOnOne,
    call: { ...prefs.call },
    mute,
    bypassPreferencesForMentions: prefs.bypassPreferencesForMentions,
    usePrivacyTemplate: privacy === 2 || (privacy === 3 && user?.usePrivacyTemplate === true),
  };
}

export type ConversationType = 'oneOnOne' | 'group';

const MESSAGE_KINDS = ['message', 'reply', 'quotedReply'] as const;
const GROUP_ACTION_KINDS = ['memberLeft', 'memberAdded', 'memberJoined', 'memberKicked', 'memberBanned', 'memberUnbanned', 'memberScopeChanged'] as const;
type CallKind = `call${Capitalize<CallEvent>}`;

/** What happened, as the preferences name it. Group actions happen in groups only. */
export type NotificationKind = (typeof MESSAGE_KINDS)[number] | 'edited' | 'deleted' | 'reaction' | (typeof GROUP_ACTION_KINDS)[number] | CallKind;

export interface NotificationEvent {
  conversationType: ConversationType;
  kind: NotificationKind;
  /** The recipient is mentioned (messages, replies and quoted replies). */
  mentioned: boolean;
  /** The message the event is about is the recipient's own (a reaction to their message). */
  ownMessage: boolean;
}

const isMessageKind = (kind: NotificationKind): kind is (typeof MESSAGE_KINDS)[number] => (MESSAGE_KINDS as readonly string[]).includes(kind);

/**
 * Whether the recipient's event preferences ask for this event. With `bypassPreferencesForMentions`,
 * a message, reply or quoted reply that mentions the recipient is wanted whatever they say.
 */
export function wantsNotification(prefs: EffectivePreferences, event: NotificationEvent): boolean {
  const { kind } = event;
  if (isMessageKind(kind)) {
    if (event.mentioned && prefs.bypassPreferencesForMentions) return true;
    const field = kind === 'message' ? 'messagesSetting' : kind === 'reply' ? 'repliesSetting' : 'quotedRepliesSetting';
    const setting = event.conversationType === 'group' ? prefs.group[field] : prefs.oneOnOne[field];
    return setting === 2 || (setting === 3 && event.mentioned);
  }
  const section = event.conversationType === 'group' ? prefs.group : prefs.oneOnOne;
  if (kind === 'edited') return section.messageEditedSetting === 2;
  if (kind === 'deleted') return section.messageDeletedSetting === 2;
  if (kind === 'reaction') return section.reactionsSetting === 3 || (section.reactionsSetting === 2 && event.ownMessage);
  if (kind.startsWith('call')) {
    const name = `${kind.charAt(4).toLowerCase()}${kind.slice(5)}Setting` as keyof CallPreferences;
    return prefs.call[name] === 2;
  }
  // A group action: none in a 1:1 conversation.
  if (event.conversationType !== 'group') return false;
  return prefs.group[`${kind}Setting` as keyof GroupPreferences] === 2;
}

/** A conversation a user muted: until `until` (unix ms), or until unmuted (null). */
export interface MutedConversation {
  type: ConversationType;
  /** The other user's uid (1:1) or the group's guid. */
  id: string;
  until: number | null;
}

/** Whether `mutes` hold `conversation`, muted at `nowMs`. */
export function isMuted(mutes: readonly MutedConversation[], conversation: { type: ConversationType; id: string }, nowMs: number): boolean {
  return mutes.some((m) => m.type === conversation.type && m.id === conversation.id && (m.until === null || m.until > nowMs));
}

/** Whether the app lets users' mutes of this kind of conversation apply. */
export function mutesApply(prefs: EffectivePreferences, type: ConversationType): boolean {
  return type === 'group' ? prefs.mute.mutedGroupsOverride : prefs.mute.mutedOneOnOnesOverride;
}

/** Why a recipient is not notified: their event preferences, a muted conversation, do not disturb, the schedule. */
export type SkipReason = 'preference' | 'muted' | QuietReason;

/** What the engine knows of one recipient (PreferencesService.recipients). */
export interface RecipientPreferences {
  preferences: EffectivePreferences;
  /** IANA name; null: UTC. */
  timeZone: string | null;
  /** The recipient muted the event's conversation (and the mute has not ended). */
  muted: boolean;
}

/**
 * Why the recipient is not notified of `event` at `at`, or undefined: they are. In that order: the
 * event preferences, the muted conversation (where the app lets mutes apply), do not disturb and
 * the schedule. A mention that bypasses preferences bypasses the mute too, not do not disturb nor
 * the schedule.
 */
export function notificationSkipReason(recipient: RecipientPreferences, event: NotificationEvent, at: Date): SkipReason | undefined {
  const prefs = recipient.preferences;
  if (!wantsNotification(prefs, event)) return 'preference';
  const bypass = prefs.bypassPreferencesForMentions && event.mentioned && isMessageKind(event.kind);
  if (recipient.muted && !bypass && mutesApply(prefs, event.conversationType)) return 'muted';
  return quietReason(prefs.mute, recipient.timeZone, at);
}
