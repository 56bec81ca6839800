import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { CONTACT_LIMITS } from '../domain/notifications/preferences-contact.js';
import { NOTIFICATION_LIMITS } from '../domain/notifications/preferences-input.js';
import { CALL_EVENTS, WEEKDAYS } from '../domain/notifications/preferences.js';
import { TIME_ZONE_MAX_LENGTH } from '../domain/notifications/quiet-hours.js';
import { Data, Id, OnBehalfOfHeader } from './common.schema.js';

// Who is notified and when (docs/notifications.md): the app's settings, users' preferences,
// muted conversations, time zones and contact details. Every field in the vendor's names; a
// change names only fields that exist (an unknown one is refused, naming it). The service checks
// what a schema cannot: times of day, customJson's size, a digest's two maxima, time zone names.

/** Each section twice: whole (answers) and as a change (every field optional, no other field). */
function section<T extends TProperties>(props: T, description: string) {
  return {
    whole: Type.Object(props, { description }),
    change: Type.Partial(Type.Object(props), { additionalProperties: false, description }),
  };
}

const Level3 = (what: string) => Type.Integer({ enum: [1, 2, 3], description: `1: Don't notify. 2: Notify for all ${what}. 3: Notify for ${what} with mentions.` });
const Reactions = () => Type.Integer({ enum: [1, 2, 3], description: "1: Don't notify. 2: Reactions to the user's own messages. 3: Reactions to all messages." });
const OnOff = () => Type.Integer({ enum: [1, 2], description: "1: Don't notify. 2: Notify." });
const Override = () => Type.Boolean({ description: 'Whether users may set this for themselves.' });
const Flag = (description: string) => Type.Boolean({ description });

const Time = (description: string) => Type.Integer({ minimum: 0, maximum: 2359, description: `${description}, HHMM in the user's time zone (minutes 00 to 59).` });
const DayProps = {
  from: Time('Notifications are delivered from'),
  to: Time('until (that minute included)'),
  dnd: Flag('Do not disturb all day.'),
};
const Day = section(DayProps, 'One day: notifications are delivered from `from` to `to`; `from` after `to` delivers before `to` and after `from`.');
const days = <T extends TSchema>(day: T) => Object.fromEntries(WEEKDAYS.map((name) => [name, day])) as Record<(typeof WEEKDAYS)[number], T>;
const Schedule = section(days(Day.whole), 'The weekly schedule.');
const ScheduleChange = Type.Partial(Type.Object(days(Day.change)), { additionalProperties: false, description: 'The days to change.' });

const Group = section(
  {
    messagesSetting: Level3('messages'),
    messagesOverride: Override(),
    repliesSetting: Level3('replies'),
    repliesOverride: Override(),
    quotedRepliesSetting: Level3('quoted replies'),
    quotedRepliesOverride: Override(),
    reactionsSetting: Reactions(),
    reactionsOverride: Override(),
    ...Object.fromEntries(
      ['memberLeft', 'memberAdded', 'memberJoined', 'memberKicked', 'memberBanned', 'memberUnbanned', 'memberScopeChanged'].flatMap((name) => [
        [`${name}Setting`, OnOff()],
        [`${name}Override`, Override()],
      ]),
    ),
    messageEditedSetting: OnOff(),
    messageDeletedSetting: OnOff(),
  },
  'Events of group conversations.',
);

const OneOnOne = section(
  {
    messagesSetting: Level3('messages'),
    messagesOverride: Override(),
    repliesSetting: Level3('replies'),
    repliesOverride: Override(),
    quotedRepliesSetting: Level3('quoted replies'),
    quotedRepliesOverride: Override(),
    reactionsSetting: Reactions(),
    reactionsOverride: Override(),
    messageEditedSetting: OnOff(),
    messageDeletedSetting: OnOff(),
  },
  'Events of 1:1 conversations.',
);

const Call = section(
  Object.fromEntries(
    CALL_EVENTS.flatMap((event) => [
      [`${event}Setting`, OnOff()],
      [`${event}Override`, Override()],
    ]),
  ),
  'Calls.',
);

const muteProps = (schedule: TSchema) => ({
  dndPreferenceSetting: Type.Integer({ enum: [1, 2], description: '1: Do not disturb off. 2: Do not disturb on (no notification at all).' }),
  dndPreferenceOverride: Override(),
  schedulePreferenceSetting: schedule,
  schedulePreferenceOverride: Override(),
  mutedGroupsOverride: Flag("Whether users' mutes of group conversations apply."),
  mutedOneOnOnesOverride: Flag("Whether users' mutes of 1:1 conversations apply."),
});
const Mute = { whole: Type.Object(muteProps(Schedule.whole)), change: Type.Partial(Type.Object(muteProps(ScheduleChange)), { additionalProperties: false }) };

const Digest = section(
  {
    notifyForUnreadOnly: Flag('Only unread messages (false: all the messages).'),
    intervalInSeconds: Type.Integer({ minimum: NOTIFICATION_LIMITS.minIntervalSeconds, maximum: NOTIFICATION_LIMITS.maxIntervalSeconds, description: 'The time a digest waits for unread messages.' }),
    maxPerDay: Type.Integer({ minimum: 1, maximum: NOTIFICATION_LIMITS.maxPerDay, description: 'Digests a user gets per day at most.' }),
    maxPerDayPerConversation: Type.Integer({ minimum: 1, maximum: NOTIFICATION_LIMITS.maxPerDay, description: 'Digests of one conversation per day at most (not more than maxPerDay).' }),
  },
  'Digests of unread messages.',
);

const Push = section(
  {
    includeMessageObjectSetting: Flag('Include the message object in the push payload.'),
    includeSenderMetadataSetting: Flag("Include the sender's metadata in the message object."),
    includeReceiverMetadataSetting: Flag("Include the receiver's metadata in the message object."),
    trimTextFieldSetting: Flag('Trim the text field if present.'),
    includeMessageMetadataSetting: Flag("Include the message's metadata in the message object."),
    customJson: Type.Object({}, { additionalProperties: true, description: `Custom JSON added to the payload (at most ${NOTIFICATION_LIMITS.customJsonBytes} bytes).` }),
  },
  'What push payloads include.',
);

const Preferences = section(
  {
    group: Group.whole,
    bypassPreferencesForMentions: Flag('Mentioned users are notified of messages and replies whatever their preferences and mutes say.'),
    call: Call.whole,
    oneOnOne: OneOnOne.whole,
    mute: Mute.whole,
    email: Digest.whole,
    sms: Digest.whole,
    push: Push.whole,
  },
  "The app's preferences.",
);
const PreferencesChange = Type.Partial(
  Type.Object({
    group: Group.change,
    bypassPreferencesForMentions: Preferences.whole.properties.bypassPreferencesForMentions,
    call: Call.change,
    oneOnOne: OneOnOne.change,
    mute: Mute.change,
    email: Digest.change,
    sms: Digest.change,
    push: Push.change,
  }),
  { additionalProperties: false },
);

const SoundName = Type.String({ minLength: 1, maxLength: NOTIFICATION_LIMITS.soundLength });
const Sound = section({ chat: SoundName, call: SoundName }, 'Sounds of chat and call notifications.');

const Text = Type.String({ maxLength: NOTIFICATION_LIMITS.templateLength });
const template = (fields: string[]) => section(Object.fromEntries(fields.map((field) => [field, Text])), 'A template ({{...}} names what it shows).');
const TITLES = ['titleOneOnOne', 'titleGroup'];
const TEMPLATE_FIELDS: Record<string, string[]> = {
  textMessageTemplate: [...TITLES, 'body'],
  mediaMessageTemplate: [...TITLES, 'body_image', 'body_audio', 'body_video', 'body_file'],
  pollMessageTemplate: [...TITLES, 'body', 'body_fallback'],
  reminderMessageTemplate: [...TITLES, 'body', 'body_fallback'],
  customMessageTemplate: [...TITLES, 'body', 'body_fallback'],
  emailSubjectTemplate: ['subjectGroup', 'subjectOneOnOne'],
  smsContentTemplate: ['bodyGroup', 'bodyOneOnOne'],
  userMentionTemplate: [...TITLES, 'bodyOneOnOne', 'bodyGroup', 'body_fallback'],
  groupMentionTemplate: ['titleGroup', 'body', 'body_fallback'],
};
const templateProps = (form: 'whole' | 'change') => ({
  usePrivacyTemplate: Type.Integer({ enum: [1, 2, 3], description: '1: Default templates. 2: Privacy templates. 3: Default templates, unless the user chooses privacy.' }),
  ...Object.fromEntries(
    Object.entries(TEMPLATE_FIELDS).flatMap(([name, fields]) => {
      const shape = template(fields)[form];
      return [
        [`${name}Default`, shape],
        [`${name}Privacy`, shape],
      ];
    }),
  ),
});
const Templates = { whole: Type.Object(templateProps('whole')), change: Type.Partial(Type.Object(templateProps('change')), { additionalProperties: false }) };

/** notifications-push-update-settings. */
export const SettingsChangeBody = Type.Object(
  {
    preferences: Type.Optional(PreferencesChange),
    sound: Type.Optional(Sound.change),
    templates: Type.Optional(Templates.change),
  },
  { additionalProperties: false },
);
export const SettingsResponse = Data(Type.Object({ preferences: Preferences.whole, sound: Sound.whole, templates: Templates.whole }));
export const SuccessResponse = Data(Type.Object({ success: Type.Boolean() }));

// A user's preferences.

export const UidQuery = Type.Object({ uid: Id('The user, of this app.') });

const userGroupChange = Object.fromEntries(['Messages', 'Replies', 'QuotedReplies'].map((name) => [`group${name}`, Level3(name.toLowerCase())]).concat([['groupReactions', Reactions()]]));
for (const name of ['MemberLeft', 'MemberAdded', 'MemberJoined', 'MemberKicked', 'MemberBanned', 'MemberUnbanned', 'MemberScopeChanged']) userGroupChange[`group${name}`] = OnOff();
const userOneOnOneChange = Object.fromEntries(['Messages', 'Replies', 'QuotedReplies'].map((name) => [`oneOnOne${name}`, Level3(name.toLowerCase())]).concat([['oneOnOneReactions', Reactions()]]));
const UserMuteChange = {
  dnd: Type.Integer({ enum: [1, 2], description: '1: Do not disturb off. 2: On.' }),
  schedule: ScheduleChange,
};

/** notifications-push-update-preferences: fields the app does not let users override are ignored. */
export const UserPreferencesBody = Type.Partial(
  Type.Object({
    groupPreferences: Type.Partial(Type.Object(userGroupChange), { additionalProperties: false }),
    oneOnOnePreferences: Type.Partial(Type.Object(userOneOnOneChange), { additionalProperties: false }),
    mutePreferences: Type.Partial(Type.Object(UserMuteChange), { additionalProperties: false }),
    usePrivacyTemplate: Flag('Use the privacy templates (where the app lets users choose: usePrivacyTemplate 3).'),
  }),
  { additionalProperties: false },
);

export const UserPreferencesResponse = Data(
  Type.Object({
    preferences: Type.Object({
      group: Group.whole,
      oneOnOne: OneOnOne.whole,
      mute: Mute.whole,
      usePrivacyTemplate: Flag("Whether the user's notifications use the privacy templates."),
    }),
    sound: Sound.whole,
    templates: Templates.whole,
  }),
);

export const ResetPreferencesResponse = Data(
  Type.Object({
    groupPreferences: Type.Object(userGroupChange),
    oneOnOnePreferences: Type.Object(userOneOnOneChange),
    mutePreferences: Type.Object({ dnd: UserMuteChange.dnd, schedule: Schedule.whole }),
    usePrivacyTemplate: Type.Boolean(),
  }),
);

// Muted conversations.

const ConversationType = Type.Union([Type.Literal('oneOnOne'), Type.Literal('group')], { description: 'oneOnOne or group.' });
const ConversationId = Id('The other user (oneOnOne) or the group (group).');
/** Unix ms, at most the end of the year 9999. */
const Until = Type.Integer({ minimum: 0, maximum: 253_402_300_799_999, description: 'Muted until this time, unix milliseconds, in the future; muted until unmuted when not given.' });

export const MuteBody = Type.Object({
  conversations: Type.Array(Type.Object({ id: ConversationId, type: ConversationType, until: Type.Optional(Until) }, { additionalProperties: false }), {
    minItems: 1,
    maxItems: NOTIFICATION_LIMITS.mutesPerCall,
  }),
});
export const UnmuteBody = Type.Object({
  conversations: Type.Array(Type.Object({ id: ConversationId, type: ConversationType }, { additionalProperties: false }), {
    minItems: 1,
    maxItems: NOTIFICATION_LIMITS.mutesPerCall,
  }),
});
export const MutedResponse = Data(
  Type.Object({
    mutedConversations: Type.Array(Type.Object({ id: Type.String(), type: Type.String(), until: Type.Optional(Type.Integer({ description: 'Unix ms; absent: until unmuted.' })) })),
  }),
);

// Time zone and contact details.

export const TimezoneBody = Type.Object({
  timezone: Type.String({ minLength: 1, maxLength: TIME_ZONE_MAX_LENGTH, description: 'An IANA time zone name, e.g. Asia/Tokyo.' }),
});
export const TimezoneResponse = Data(Type.Object({ timezone: Type.String({ description: 'The IANA name; UTC until one is set.' }) }));

export const ContactHeaders = Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) });
export const ContactQuery = Type.Object({ uid: Type.Optional(Id('The user, instead of the onBehalfOf header.')) });
export const ContactBody = Type.Object(
  {
    email: Type.Optional(Type.Union([Type.String({ maxLength: CONTACT_LIMITS.emailLength, description: "The user's e-mail address." }), Type.Null()])),
    phno: Type.Optional(Type.Union([Type.String({ maxLength: CONTACT_LIMITS.phoneLength, description: 'E.164: + then the country code and number, 15 digits at most.' }), Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1, description: 'null removes a field.' },
);
export const ContactResponse = Data(Type.Object({ email: Type.Optional(Type.String()), phno: Type.Optional(Type.String()) }));
