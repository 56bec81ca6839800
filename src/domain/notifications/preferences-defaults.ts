/**
 * The settings of an app that has set none, or reset them (notifications-push-reset-settings):
 * the vendor's documented defaults (its dashboard's "(Default)" marks; the list-settings example
 * for sounds, templates, e-mail, SMS and push). Calls notify by default, as the schema's examples
 * say (the list example shows 1 for them): an incoming call nobody hears of is no call.
 */
import type { AppNotificationSettings, CallPreferences, DaySchedule, Templates, WeekSchedule } from './preferences.js';
import { CALL_EVENTS, WEEKDAYS } from './preferences.js';

const ALL_DAY: DaySchedule = { from: 0, to: 2359, dnd: false };

const SENDER = '{{message.data.entities.sender.entity.name}}';
const IN_GROUP = `${SENDER} @ {{message.data.entities.receiver.entity.name}}`;

/** Every template the vendor names, with its default text. */
export const DEFAULT_TEMPLATES: Templates = {
  usePrivacyTemplate: 3,
  textMessageTemplateDefault: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, body: '{{message.data.text}}' },
  textMessageTemplatePrivacy: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, body: 'New message' },
  mediaMessageTemplateDefault: {
    titleOneOnOne: SENDER,
    titleGroup: IN_GROUP,
    body_audio: '🔈 Has sent an audio',
    body_file: '📄 Has sent a file',
    body_image: '📷 Has sent an image',
    body_video: '🎥 Has sent a video',
  },
  mediaMessageTemplatePrivacy: {
    titleOneOnOne: SENDER,
    titleGroup: IN_GROUP,
    body_audio: 'New audio message',
    body_file: 'New file message',
    body_image: 'New image message',
    body_video: 'New video message',
  },
  pollMessageTemplateDefault: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, body: '{{message.data.text}}', body_fallback: '' },
  pollMessageTemplatePrivacy: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, body: '{{message.data.text}}', body_fallback: '' },
  reminderMessageTemplateDefault: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, body: '{{message.data.text}}', body_fallback: '' },
  reminderMessageTemplatePrivacy: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, body: '{{message.data.text}}', body_fallback: '' },
  customMessageTemplateDefault: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, body: '{{message.data.text}}', body_fallback: 'New message' },
  customMessageTemplatePrivacy: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, body: 'New message', body_fallback: 'New message' },
  emailSubjectTemplateDefault: { subjectGroup: 'New messages in {{groupDetails.name}}', subjectOneOnOne: 'New messages from {{senderDetails.name}}' },
  emailSubjectTemplatePrivacy: { subjectGroup: 'New messages in {{groupDetails.name}}', subjectOneOnOne: 'New messages from {{senderDetails.name}}' },
  smsContentTemplateDefault: {
    bodyGroup: "You've received {{messages.length}} message(s) in {{groupDetails.name}}! Read them at https://your-website.com.",
    bodyOneOnOne: "You've received {{messages.length}} message(s) from {{senderDetails.name}}! Read them at https://your-website.com.",
  },
  smsContentTemplatePrivacy: {
    bodyGroup: "You've received {{messages.length}} message(s) in {{groupDetails.name}}! Read them at https://your-website.com.",
    bodyOneOnOne: "You've received {{messages.length}} message(s) from {{senderDetails.name}}! Read them at https://your-website.com.",
  },
  userMentionTemplateDefault: {
    titleOneOnOne: SENDER,
    titleGroup: IN_GROUP,
    bodyOneOnOne: `${SENDER} mentioned you: {{message.data.text}}`,
    bodyGroup: `${SENDER} mentioned you in {{message.data.entities.receiver.entity.name}}: {{message.data.text}}`,
    body_fallback: 'New mention',
  },
  userMentionTemplatePrivacy: { titleOneOnOne: SENDER, titleGroup: IN_GROUP, bodyOneOnOne: `${SENDER} mentioned you`, bodyGroup: `${SENDER} mentioned you`, body_fallback: 'New mention' },
  groupMentionTemplateDefault: { titleGroup: IN_GROUP, body: `${SENDER} mentioned everyone: {{message.data.text}}`, body_fallback: 'New mention' },
  groupMentionTemplatePrivacy: { titleGroup: IN_GROUP, body: `${SENDER} mentioned everyone`, body_fallback: 'New mention' },
};

const member = { Setting: 1, Override: true };

function defaultCalls(): CallPreferences {
  const calls: Record<string, number | boolean> = {};
  for (const event of CALL_EVENTS) {
    calls[`${event}Setting`] = 2;
    calls[`${event}Override`] = false;
  }
  return calls as CallPreferences;
}

function allDays(): WeekSchedule {
  return Object.fromEntries(WEEKDAYS.map((day) => [day, { ...ALL_DAY }])) as WeekSchedule;
}

/** A new copy of the defaults each call (the caller may change it). */
export function defaultNotificationSettings(): AppNotificationSettings {
  return {
    preferences: {
      group: {
        messagesSetting: 2,
        messagesOverride: true,
        repliesSetting: 2,
        repliesOverride: true,
        quotedRepliesSetting: 2,
        quotedRepliesOverride: true,
        reactionsSetting: 2,
        reactionsOverride: true,
        memberLeftSetting: member.Setting,
        memberLeftOverride: member.Override,
        memberAddedSetting: member.Setting,
        memberAddedOverride: member.Override,
        memberJoinedSetting: member.Setting,
        memberJoinedOverride: member.Override,
        memberKickedSetting: member.Setting,
        memberKickedOverride: member.Override,
        memberBannedSetting: member.Setting,
        memberBannedOverride: member.Override,
        memberUnbannedSetting: member.Setting,
        memberUnbannedOverride: member.Override,
        memberScopeChangedSetting: member.Setting,
        memberScopeChangedOverride: member.Override,
        messageEditedSetting: 2,
        messageDeletedSetting: 2,
      },
      bypassPreferencesForMentions: false,
      call: defaultCalls(),
      oneOnOne: {
        messagesSetting: 2,
        messagesOverride: true,
        repliesSetting: 2,
        repliesOverride: true,
        quotedRepliesSetting: 2,
        quotedRepliesOverride: true,
        reactionsSetting: 2,
        reactionsOverride: true,
        messageEditedSetting: 2,
        messageDeletedSetting: 2,
      },
      mute: {
        dndPreferenceSetting: 1,
        dndPreferenceOverride: true,
        schedulePreferenceSetting: allDays(),
        schedulePreferenceOverride: true,
        mutedGroupsOverride: true,
        mutedOneOnOnesOverride: true,
      },
      email: { notifyForUnreadOnly: true, intervalInSeconds: 7200, maxPerDay: 20, maxPerDayPerConversation: 2 },
      sms: { notifyForUnreadOnly: true, intervalInSeconds: 7200, maxPerDay: 20, maxPerDayPerConversation: 2 },
      push: {
        includeMessageObjectSetting: false,
        includeSenderMetadataSetting: true,
        includeReceiverMetadataSetting: true,
        trimTextFieldSetting: false,
        includeMessageMetadataSetting: true,
        customJson: {},
      },
    },
    sound: { chat: 'default', call: 'default' },
    templates: structuredClone(DEFAULT_TEMPLATES),
  };
}
