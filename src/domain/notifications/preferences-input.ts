/**
 * Changes to notification settings and preferences (docs/notifications.md): the app's settings
 * merged with a change, the rules a schema cannot say, and a user's change in the vendor's names
 * (`groupPreferences.groupMessages`) mapped to their values, the fields the app does not let
 * users override left out (as the vendor does: no error). Also how a user's values are stored:
 * one entry per field, so that a change merges with what is there.
 */
import type { ErrorDetails } from '../errors.js';
import {
  GROUP_USER_FIELDS,
  ONE_ON_ONE_USER_FIELDS,
  WEEKDAYS,
  type AppNotificationSettings,
  type DaySchedule,
  type GroupUserField,
  type OneOnOneUserField,
  type UserPreferenceValues,
  type Weekday,
} from './preferences.js';
import { isClockTime } from './quiet-hours.js';

export const NOTIFICATION_LIMITS = {
  /** A template's text, a sound's name. */
  templateLength: 1000,
  soundLength: 255,
  /** push.customJson, serialised. */
  customJsonBytes: 4096,
  /** E-mail and SMS digests. */
  minIntervalSeconds: 60,
  maxIntervalSeconds: 86_400,
  maxPerDay: 1000,
  /** Conversations in one mute or unmute call, and muted at once per user. */
  mutesPerCall: 100,
  mutesPerUser: 1000,
} as const;

/** The vendor's names of a user's group values (notifications-push-update-preferences). */
export const GROUP_PATCH_NAMES = {
  groupMessages: 'messagesSetting',
  groupReplies: 'repliesSetting',
  groupQuotedReplies: 'quotedRepliesSetting',
  groupReactions: 'reactionsSetting',
  groupMemberLeft: 'memberLeftSetting',
  groupMemberAdded: 'memberAddedSetting',
  groupMemberJoined: 'memberJoinedSetting',
  groupMemberKicked: 'memberKickedSetting',
  groupMemberBanned: 'memberBannedSetting',
  groupMemberUnbanned: 'memberUnbannedSetting',
  groupMemberScopeChanged: 'memberScopeChangedSetting',
} as const satisfies Record<string, GroupUserField>;

export const ONE_ON_ONE_PATCH_NAMES = {
  oneOnOneMessages: 'messagesSetting',
  oneOnOneReplies: 'repliesSetting',
  oneOnOneQuotedReplies: 'quotedRepliesSetting',
  oneOnOneReactions: 'reactionsSetting',
} as const satisfies Record<string, OneOnOneUserField>;

export type GroupPatchName = keyof typeof GROUP_PATCH_NAMES;
export type OneOnOnePatchName = keyof typeof ONE_ON_ONE_PATCH_NAMES;
type DayPatch = Partial<DaySchedule>;

/** A user's change, in the vendor's names. */
export interface UserPreferencesPatch {
  groupPreferences?: Partial<Record<GroupPatchName, number>>;
  oneOnOnePreferences?: Partial<Record<OneOnOnePatchName, number>>;
  mutePreferences?: { dnd?: number; schedule?: Partial<Record<Weekday, DayPatch>> };
  usePrivacyTemplate?: boolean;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `base` with the fields of `change` that `base` has, of the same type (numbers, booleans,
 * strings; objects field by field); `customJson` is taken whole. Unknown fields and fields of
 * another type are left out: this reads stored settings as leniently as it merges a checked change.
 */
export function mergeKnown<T>(base: T, change: unknown): T {
  if (!isPlainObject(base) || !isPlainObject(change)) return base;
  const out: Record<string, unknown> = { ...base };
  for (const [key, current] of Object.entries(base)) {
    if (!Object.hasOwn(change, key)) continue;
    const next = change[key];
    if (key === 'customJson') {
      if (isPlainObject(next)) out[key] = structuredClone(next);
    } else if (isPlainObject(current)) {
      out[key] = mergeKnown(current, next);
    } else if (typeof next === typeof current && (typeof next !== 'number' || Number.isFinite(next))) {
      out[key] = next;
    }
  }
  return out as T;
}

function scheduleProblems(schedule: unknown, field: string, details: ErrorDetails): void {
  if (!isPlainObject(schedule)) return;
  for (const day of WEEKDAYS) {
    const value = schedule[day];
    if (!isPlainObject(value)) continue;
    for (const end of ['from', 'to'] as const) {
      const time = value[end];
      if (typeof time === 'number' && !isClockTime(time)) details[`${field}.${day}.${end}`] = 'must be a time of day as HHMM (minutes 00 to 59)';
    }
  }
}

/** What is wrong with a change to the app's settings, beyond its schema, field by field (empty: nothing). */
// biome-ignore lint/suspicious/noExplicitAny: checked field by field below
export function settingsChangeProblems(change: { preferences?: Record<string, any> }, merged: AppNotificationSettings): ErrorDetails {
  const details: ErrorDetails = {};
  const prefs = change.preferences;
  scheduleProblems(prefs?.mute?.schedulePreferenceSetting, 'preferences.mute.schedulePreferenceSetting', details);
  if (prefs?.push?.customJson !== undefined && new TextEncoder().encode(JSON.stringify(prefs.push.customJson)).length > NOTIFICATION_LIMITS.customJsonBytes) {
    details['preferences.push.customJson'] = `must be at most ${NOTIFICATION_LIMITS.customJsonBytes} bytes as JSON`;
  }
  for (const channel of ['email', 'sms'] as const) {
    const digest = merged.preferences[channel];
    if (prefs?.[channel] !== undefined && digest.maxPerDayPerConversation > digest.maxPerDay) {
      details[`preferences.${channel}.maxPerDayPerConversation`] = `must be at most maxPerDay (${digest.maxPerDay})`;
    }
  }
  return details;
}

/**
 * A user's change as values: what the app lets users override, in the values' names (the rest
 * left out, no error); and the problems a schema cannot see (times of day that are none).
 */
export function userValuesFromPatch(patch: UserPreferencesPatch, app: AppNotificationSettings): { values: UserPreferenceValues; problems: ErrorDetails } {
  const prefs = app.preferences;
  const problems: ErrorDetails = {};
  scheduleProblems(patch.mutePreferences?.schedule, 'mutePreferences.schedule', problems);
  const values: UserPreferenceValues = {};
  for (const [name, field] of Object.entries(GROUP_PATCH_NAMES) as Array<[GroupPatchName, GroupUserField]>) {
    const value = patch.groupPreferences?.[name];
    if (value !== undefined && prefs.group[GROUP_USER_FIELDS[field]]) (values.group ??= {})[field] = value;
  }
  for (const [name, field] of Object.entries(ONE_ON_ONE_PATCH_NAMES) as Array<[OneOnOnePatchName, OneOnOneUserField]>) {
    const value = patch.oneOnOnePreferences?.[name];
    if (value !== undefined && prefs.oneOnOne[ONE_ON_ONE_USER_FIELDS[field]]) (values.oneOnOne ??= {})[field] = value;
  }
  const mute = patch.mutePreferences;
  if (mute?.dnd !== undefined && prefs.mute.dndPreferenceOverride) values.dnd = mute.dnd;
  if (mute?.schedule && prefs.mute.schedulePreferenceOverride) {
    for (const day of WEEKDAYS) {
      const own = mute.schedule[day];
      if (own && Object.keys(own).length > 0) (values.schedule ??= {})[day] = { ...own };
    }
  }
  if (patch.usePrivacyTemplate !== undefined && app.templates.usePrivacyTemplate === 3) values.usePrivacyTemplate = patch.usePrivacyTemplate;
  return { values, problems };
}

type Entry = number | boolean;
const GROUP_RANGES: Record<GroupUserField, number> = {
  messagesSetting: 3,
  repliesSetting: 3,
  quotedRepliesSetting: 3,
  reactionsSetting: 3,
  memberLeftSetting: 2,
  memberAddedSetting: 2,
  memberJoinedSetting: 2,
  memberKickedSetting: 2,
  memberBannedSetting: 2,
  memberUnbannedSetting: 2,
  memberScopeChangedSetting: 2,
};

/** A user's values as stored: one entry per field (`group.messagesSetting`, `mute.schedule.monday.from`). */
export function userValueEntries(values: UserPreferenceValues): Record<string, Entry> {
  const entries: Record<string, Entry> = {};
  for (const [field, value] of Object.entries(values.group ?? {})) entries[`group.${field}`] = value;
  for (const [field, value] of Object.entries(values.oneOnOne ?? {})) entries[`oneOnOne.${field}`] = value;
  if (values.dnd !== undefined) entries['mute.dnd'] = values.dnd;
  for (const [day, schedule] of Object.entries(values.schedule ?? {})) {
    for (const [field, value] of Object.entries(schedule ?? {})) entries[`mute.schedule.${day}.${field}`] = value;
  }
  if (values.usePrivacyTemplate !== undefined) entries.usePrivacyTemplate = values.usePrivacyTemplate;
  return entries;
}

const inRange = (value: unknown, max: number): value is number => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= max;

/** Stored entries read back as values; entries that are not a value's (of another version, or damaged) are left out. */
export function userValuesFromEntries(stored: unknown): UserPreferenceValues {
  const values: UserPreferenceValues = {};
  if (!isPlainObject(stored)) return values;
  for (const [key, value] of Object.entries(stored)) {
    const [section, field, day, part] = key.split('.');
    if (section === 'group' && field !== undefined && day === undefined && Object.hasOwn(GROUP_RANGES, field)) {
      if (inRange(value, GROUP_RANGES[field as GroupUserField])) (values.group ??= {})[field as GroupUserField] = value;
    } else if (section === 'oneOnOne' && field !== undefined && day === undefined && Object.hasOwn(ONE_ON_ONE_USER_FIELDS, field)) {
      if (inRange(value, 3)) (values.oneOnOne ??= {})[field as OneOnOneUserField] = value;
    } else if (key === 'mute.dnd') {
      if (inRange(value, 2)) values.dnd = value;
    } else if (section === 'mute' && field === 'schedule' && (WEEKDAYS as readonly string[]).includes(day ?? '') && key.split('.').length === 4) {
      const valid = part === 'from' || part === 'to' ? typeof value === 'number' && isClockTime(value) : part === 'dnd' && typeof value === 'boolean';
      if (valid) ((values.schedule ??= {})[day as Weekday] ??= {})[part as keyof DaySchedule] = value as never;
    } else if (key === 'usePrivacyTemplate' && typeof value === 'boolean') {
      values.usePrivacyTemplate = value;
    }
  }
  return values;
}
