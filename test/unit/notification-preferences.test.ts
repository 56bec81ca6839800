import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isEmailAddress, isPhoneNumber } from '../../src/domain/notifications/preferences-contact.js';
import { defaultNotificationSettings } from '../../src/domain/notifications/preferences-defaults.js';
import { mergeKnown, settingsChangeProblems, userValueEntries, userValuesFromEntries, userValuesFromPatch } from '../../src/domain/notifications/preferences-input.js';
import {
  canonicalTimeZone,
  effectivePreferences,
  isMuted,
  isQuietAt,
  localClock,
  notificationSkipReason,
  quietReason,
  wantsNotification,
  WEEKDAYS,
  type AppNotificationSettings,
  type EffectivePreferences,
  type NotificationEvent,
  type WeekSchedule,
} from '../../src/domain/notifications/preferences.js';
import { isClockTime } from '../../src/domain/notifications/quiet-hours.js';

const app = (change: (s: AppNotificationSettings) => void = () => {}): AppNotificationSettings => {
  const settings = defaultNotificationSettings();
  change(settings);
  return settings;
};
const prefs = (change?: (s: AppNotificationSettings) => void, user?: Parameters<typeof effectivePreferences>[1]) => effectivePreferences(app(change), user);
const event = (fields: Partial<NotificationEvent>): NotificationEvent => ({ conversationType: 'group', kind: 'message', mentioned: false, ownMessage: false, ...fields });
const week = (day: { from: number; to: number; dnd?: boolean }): WeekSchedule => Object.fromEntries(WEEKDAYS.map((d) => [d, { from: day.from, to: day.to, dnd: day.dnd ?? false }])) as WeekSchedule;
const quiet = (schedule: WeekSchedule, dnd = 1) => ({ dndPreferenceSetting: dnd, schedulePreferenceSetting: schedule });

describe('effectivePreferences', () => {
  it('is the app’s settings when the user set nothing', () => {
    const settings = app();
    const effective = effectivePreferences(settings, undefined);
    assert.deepEqual(effective.group, settings.preferences.group);
    assert.deepEqual(effective.oneOnOne, settings.preferences.oneOnOne);
    assert.deepEqual(effective.mute, settings.preferences.mute);
    assert.deepEqual(effective.call, settings.preferences.call);
    assert.equal(effective.usePrivacyTemplate, false, 'usePrivacyTemplate 3: default templates until the user chooses');
  });

  it('takes the user’s values only where the app lets users override them', () => {
    const user = { group: { messagesSetting: 3, memberJoinedSetting: 2 }, oneOnOne: { reactionsSetting: 1 }, dnd: 2, schedule: { monday: { from: 900 } } };
    const allowed = prefs(undefined, user);
    assert.equal(allowed.group.messagesSetting, 3);
    assert.equal(allowed.group.memberJoinedSetting, 2);
    assert.equal(allowed.oneOnOne.reactionsSetting, 1);
    assert.equal(allowed.mute.dndPreferenceSetting, 2);
    assert.deepEqual(allowed.mute.schedulePreferenceSetting.monday, { from: 900, to: 2359, dnd: false }, 'a day set in part keeps the app’s other fields');
    assert.deepEqual(allowed.mute.schedulePreferenceSetting.tuesday, { from: 0, to: 2359, dnd: false });
    const denied = prefs((s) => {
      s.preferences.group.messagesOverride = false;
      s.preferences.oneOnOne.reactionsOverride = false;
      s.preferences.mute.dndPreferenceOverride = false;
      s.preferences.mute.schedulePreferenceOverride = false;
    }, user);
    assert.equal(denied.group.messagesSetting, 2);
    assert.equal(denied.group.memberJoinedSetting, 2, 'the other fields still apply');
    assert.equal(denied.oneOnOne.reactionsSetting, 2);
    assert.equal(denied.mute.dndPreferenceSetting, 1);
    assert.deepEqual(denied.mute.schedulePreferenceSetting.monday, { from: 0, to: 2359, dnd: false });
  });

  it('does not change the app’s settings it is given', () => {
    const settings = app();
    effectivePreferences(settings, { group: { messagesSetting: 1 }, schedule: { friday: { dnd: true } } });
    assert.deepEqual(settings, defaultNotificationSettings());
  });

  it('uses the privacy templates as the app says, or as the user chose where the app lets them (3)', () => {
    const privacy = (mode: number, choice?: boolean) => prefs((s) => (s.templates.usePrivacyTemplate = mode), choice === undefined ? undefined : { usePrivacyTemplate: choice }).usePrivacyTemplate;
    assert.deepEqual([privacy(1, true), privacy(2), privacy(2, false), privacy(3), privacy(3, true), privacy(3, false)], [false, true, true, false, true, false]);
  });
});

describe('wantsNotification', () => {
  const level = (setting: number, fields: Partial<NotificationEvent>, type: 'group' | 'oneOnOne' = 'group') =>
    wantsNotification(
      prefs((s) => {
        s.preferences.group.messagesSetting = setting;
        s.preferences.group.repliesSetting = setting;
        s.preferences.group.quotedRepliesSetting = setting;
        s.preferences.oneOnOne.messagesSetting = setting;
      }),
      event({ conversationType: type, ...fields }),
    );

  it('messages, replies and quoted replies: 1 none, 2 all, 3 only with a mention', () => {
    for (const kind of ['message', 'reply', 'quotedReply'] as const) {
      assert.deepEqual([level(1, { kind }), level(1, { kind, mentioned: true })], [false, false], kind);
      assert.deepEqual([level(2, { kind }), level(2, { kind, mentioned: true })], [true, true], kind);
      assert.deepEqual([level(3, { kind }), level(3, { kind, mentioned: true })], [false, true], kind);
    }
    assert.equal(level(1, { kind: 'message' }, 'oneOnOne'), false);
    assert.equal(level(3, { kind: 'message', mentioned: true }, 'oneOnOne'), true);
    // Each conversation type reads its own section.
    assert.equal(
      wantsNotification(
        prefs((s) => (s.preferences.group.messagesSetting = 1)),
        event({ conversationType: 'oneOnOne' }),
      ),
      true,
    );
  });

  it('bypassPreferencesForMentions: a mention is wanted whatever the message preferences say', () => {
    const bypass = prefs((s) => {
      s.preferences.bypassPreferencesForMentions = true;
      s.preferences.group.messagesSetting = 1;
      s.preferences.group.reactionsSetting = 1;
    });
    assert.equal(wantsNotification(bypass, event({ mentioned: true })), true);
    assert.equal(wantsNotification(bypass, event({ mentioned: false })), false);
    assert.equal(wantsNotification(bypass, event({ kind: 'reaction', mentioned: true, ownMessage: true })), false, 'only messages and replies');
  });

  it('reactions: 1 none, 2 to the recipient’s own messages, 3 to all', () => {
    const reaction = (setting: number, ownMessage: boolean) =>
      wantsNotification(
        prefs((s) => (s.preferences.oneOnOne.reactionsSetting = setting)),
        event({ conversationType: 'oneOnOne', kind: 'reaction', ownMessage }),
      );
    assert.deepEqual([reaction(1, true), reaction(2, true), reaction(2, false), reaction(3, false)], [false, true, false, true]);
  });

  it('edits, deletes, group actions and calls: 1 none, 2 notify; group actions only in groups', () => {
    const p = prefs((s) => {
      s.preferences.group.messageEditedSetting = 1;
      s.preferences.group.memberJoinedSetting = 2;
      s.preferences.call.initiatedSetting = 2;
      s.preferences.call.endedSetting = 1;
    });
    assert.equal(wantsNotification(p, event({ kind: 'edited' })), false);
    assert.equal(wantsNotification(p, event({ kind: 'deleted' })), true);
    assert.equal(wantsNotification(p, event({ kind: 'edited', conversationType: 'oneOnOne' })), true);
    assert.equal(wantsNotification(p, event({ kind: 'memberJoined' })), true);
    assert.equal(wantsNotification(p, event({ kind: 'memberLeft' })), false, 'member events are off by default');
    assert.equal(wantsNotification(p, event({ kind: 'memberJoined', conversationType: 'oneOnOne' })), false);
    assert.equal(wantsNotification(p, event({ kind: 'callInitiated', conversationType: 'oneOnOne' })), true);
    assert.equal(wantsNotification(p, event({ kind: 'callEnded' })), false);
    assert.equal(wantsNotification(p, event({ kind: 'callUnanswered' })), true, 'calls notify by default');
  });
});

describe('isMuted', () => {
  const now = 1_700_000_000_000;
  const mutes = [
    { type: 'group' as const, id: 'g1', until: null },
    { type: 'oneOnOne' as const, id: 'bob', until: now + 1 },
    { type: 'oneOnOne' as const, id: 'carol', until: now },
  ];
  it('holds a conversation muted until unmuted or until a time still to come', () => {
    assert.equal(isMuted(mutes, { type: 'group', id: 'g1' }, now), true);
    assert.equal(isMuted(mutes, { type: 'oneOnOne', id: 'bob' }, now), true);
    assert.equal(isMuted(mutes, { type: 'oneOnOne', id: 'bob' }, now + 1), false, 'ended at its until');
    assert.equal(isMuted(mutes, { type: 'oneOnOne', id: 'carol' }, now), false);
    assert.equal(isMuted(mutes, { type: 'oneOnOne', id: 'g1' }, now), false, 'a 1:1 with a user named as the group is another conversation');
    assert.equal(isMuted([], { type: 'group', id: 'g1' }, now), false);
  });
});

describe('time zones and the schedule', () => {
  it('knows IANA names, in any case, and nothing else', () => {
    assert.equal(canonicalTimeZone('Asia/Tokyo'), 'Asia/Tokyo');
    assert.equal(canonicalTimeZone('asia/tokyo'), 'Asia/Tokyo', 'the case as the database spells it');
    assert.equal(canonicalTimeZone('Asia/Kolkata'), 'Asia/Kolkata', 'a link stays as given (Intl resolves it to Asia/Calcutta)');
    assert.equal(canonicalTimeZone('America/Argentina/Buenos_Aires'), 'America/Argentina/Buenos_Aires');
    assert.ok(canonicalTimeZone('UTC'));
    for (const bad of ['Mars/Olympus_Mons', '+05:30', 'GMT+5:30', '', 'Asia/', '../etc/passwd', 'Asia/Tokyo ', 'A'.repeat(65), 'Europe/Paris\u0000']) {
      assert.equal(canonicalTimeZone(bad), undefined, JSON.stringify(bad));
    }
  });

  it('reads the clock in the zone, through daylight saving time', () => {
    // 2024-03-10: New York moves from EST (UTC-5) to EDT (UTC-4) at 02:00.
    assert.deepEqual(localClock('America/New_York', new Date('2024-03-10T06:59:00Z')), { weekday: 'sunday', hhmm: 159 });
    assert.deepEqual(localClock('America/New_York', new Date('2024-03-10T07:00:00Z')), { weekday: 'sunday', hhmm: 300 });
    assert.deepEqual(localClock('Asia/Kolkata', new Date('2024-03-10T18:45:00Z')), { weekday: 'monday', hhmm: 15 });
    assert.deepEqual(localClock(null, new Date('2024-03-11T00:00:00Z')), { weekday: 'monday', hhmm: 0 });
    assert.deepEqual(localClock('Not/AZone', new Date('2024-03-11T23:59:00Z')), { weekday: 'monday', hhmm: 2359 }, 'UTC for a zone that is none');
  });

  it('delivers within the day’s hours in the user’s zone, both ends included', () => {
    const daytime = quiet(week({ from: 800, to: 2200 }));
    // 08:30 EDT the day after the change, 07:30 EST the day before: the same UTC time of day.
    assert.equal(isQuietAt(daytime, 'America/New_York', new Date('2024-03-10T12:30:00Z')), false);
    assert.equal(isQuietAt(daytime, 'America/New_York', new Date('2024-03-09T12:30:00Z')), true);
    assert.equal(isQuietAt(daytime, 'UTC', new Date('2024-03-09T08:00:00Z')), false, 'from is included');
    assert.equal(isQuietAt(daytime, 'UTC', new Date('2024-03-09T22:00:59Z')), false, 'to is included, to its last second');
    assert.equal(isQuietAt(daytime, 'UTC', new Date('2024-03-09T22:01:00Z')), true);
    assert.equal(isQuietAt(daytime, 'UTC', new Date('2024-03-09T07:59:59Z')), true);
  });

  it('a day whose from is after its to delivers before to and after from (across midnight)', () => {
    const nights = quiet(week({ from: 2200, to: 600 }));
    assert.equal(isQuietAt(nights, 'Europe/Paris', new Date('2024-07-01T21:30:00Z')), false, '23:30 in Paris');
    assert.equal(isQuietAt(nights, 'Europe/Paris', new Date('2024-07-01T02:00:00Z')), false, '04:00');
    assert.equal(isQuietAt(nights, 'Europe/Paris', new Date('2024-07-01T10:00:00Z')), true, '12:00');
  });

  it('reads each day of the week in the zone, and a day with dnd is quiet all day', () => {
    const schedule = week({ from: 0, to: 2359 });
    schedule.saturday = { from: 0, to: 2359, dnd: true };
    // Friday 23:30 in UTC is Saturday 05:00 in Kolkata.
    const at = new Date('2024-03-08T23:30:00Z');
    assert.equal(quietReason(quiet(schedule), 'UTC', at), undefined);
    assert.equal(quietReason(quiet(schedule), 'Asia/Kolkata', at), 'schedule');
    assert.equal(quietReason(quiet(week({ from: 0, to: 2359 }), 2), 'UTC', at), 'dnd', 'do not disturb is quiet whatever the schedule');
  });

  it('times of day: HHMM with minutes under 60', () => {
    assert.deepEqual([0, 59, 100, 1259, 2359].map(isClockTime), [true, true, true, true, true]);
    assert.deepEqual([60, 1179, 2360, 2400, -1, 12.5].map(isClockTime), [false, false, false, false, false, false]);
  });
});

describe('notificationSkipReason', () => {
  const at = new Date('2024-03-09T12:00:00Z');
  const recipient = (preferences: EffectivePreferences, muted = false, timeZone: string | null = null) => ({ preferences, muted, timeZone });
  it('says why, in order: the preferences, the mute, do not disturb, the schedule', () => {
    const off = prefs((s) => (s.preferences.group.messagesSetting = 1), { dnd: 2 });
    assert.equal(notificationSkipReason(recipient(off, true), event({}), at), 'preference');
    assert.equal(notificationSkipReason(recipient(prefs(undefined, { dnd: 2 }), true), event({}), at), 'muted');
    assert.equal(notificationSkipReason(recipient(prefs(undefined, { dnd: 2 })), event({}), at), 'dnd');
    const evenings = prefs(undefined, { schedule: Object.fromEntries(WEEKDAYS.map((d) => [d, { from: 1800 }])) });
    assert.equal(notificationSkipReason(recipient(evenings), event({}), at), 'schedule');
    assert.equal(notificationSkipReason(recipient(evenings, false, 'Asia/Tokyo'), event({}), at), undefined, '21:00 in Tokyo');
    assert.equal(notificationSkipReason(recipient(prefs()), event({}), at), undefined);
  });

  it('a mute applies only where the app lets users mute that kind of conversation', () => {
    const p = prefs((s) => (s.preferences.mute.mutedGroupsOverride = false));
    assert.equal(notificationSkipReason(recipient(p, true), event({ conversationType: 'group' }), at), undefined);
    assert.equal(notificationSkipReason(recipient(p, true), event({ conversationType: 'oneOnOne' }), at), 'muted');
  });

  it('a mention that bypasses preferences bypasses the mute, not do not disturb', () => {
    const p = prefs((s) => (s.preferences.bypassPreferencesForMentions = true));
    assert.equal(notificationSkipReason(recipient(p, true), event({ mentioned: true }), at), undefined);
    assert.equal(notificationSkipReason(recipient(p, true), event({ mentioned: false }), at), 'muted');
    const dnd = prefs((s) => (s.preferences.bypassPreferencesForMentions = true), { dnd: 2 });
    assert.equal(notificationSkipReason(recipient(dnd, true), event({ mentioned: true }), at), 'dnd');
  });
});

describe('changes and stored values', () => {
  it('merges what the settings have, of the same type; customJson whole', () => {
    const base = defaultNotificationSettings();
    base.preferences.push.customJson = { a: 1, b: 2 };
    const merged = mergeKnown(base.preferences, {
      group: { messagesSetting: 3, unknown: 1, repliesSetting: 'two' },
      push: { customJson: { c: [1] } },
      mute: { schedulePreferenceSetting: { monday: { from: 800 } } },
      extra: true,
    });
    assert.equal(merged.group.messagesSetting, 3);
    assert.equal(merged.group.repliesSetting, 2, 'a value of another type is left out');
    assert.equal((merged.group as unknown as Record<string, unknown>).unknown, undefined);
    assert.deepEqual(merged.push.customJson, { c: [1] });
    assert.deepEqual(merged.mute.schedulePreferenceSetting.monday, { from: 800, to: 2359, dnd: false });
    assert.equal((merged as unknown as Record<string, unknown>).extra, undefined);
    assert.deepEqual(mergeKnown(base.preferences, 'not an object'), base.preferences);
  });

  it('names what a schema cannot check in a settings change', () => {
    const merged = defaultNotificationSettings();
    merged.preferences.email.maxPerDayPerConversation = 30;
    const problems = settingsChangeProblems(
      {
        preferences: { email: { maxPerDayPerConversation: 30 }, mute: { schedulePreferenceSetting: { monday: { from: 1179 }, sunday: { to: 60 } } }, push: { customJson: { big: 'x'.repeat(5000) } } },
      },
      merged,
    );
    assert.deepEqual(Object.keys(problems).sort(), [
      'preferences.email.maxPerDayPerConversation',
      'preferences.mute.schedulePreferenceSetting.monday.from',
      'preferences.mute.schedulePreferenceSetting.sunday.to',
      'preferences.push.customJson',
    ]);
    assert.deepEqual(settingsChangeProblems({ preferences: { sms: { maxPerDay: 5 } } }, defaultNotificationSettings()), {});
  });

  it('maps a user’s change to their values, leaving out what the app does not let them override', () => {
    const settings = app((s) => {
      s.preferences.group.repliesOverride = false;
      s.preferences.mute.dndPreferenceOverride = false;
      s.templates.usePrivacyTemplate = 1;
    });
    const { values, problems } = userValuesFromPatch(
      {
        groupPreferences: { groupMessages: 3, groupReplies: 1, groupMemberBanned: 2 },
        oneOnOnePreferences: { oneOnOneQuotedReplies: 1 },
        mutePreferences: { dnd: 2, schedule: { monday: { from: 900, to: 1700 }, friday: {} } },
        usePrivacyTemplate: true,
      },
      settings,
    );
    assert.deepEqual(problems, {});
    assert.deepEqual(values, { group: { messagesSetting: 3, memberBannedSetting: 2 }, oneOnOne: { quotedRepliesSetting: 1 }, schedule: { monday: { from: 900, to: 1700 } } });
    assert.deepEqual(userValuesFromPatch({ mutePreferences: { schedule: { monday: { from: 1179 } } } }, app()).problems, {
      'mutePreferences.schedule.monday.from': 'must be a time of day as HHMM (minutes 00 to 59)',
    });
  });

  it('stores a user’s values one entry per field, and reads back only valid entries', () => {
    const values = { group: { messagesSetting: 3 }, oneOnOne: { reactionsSetting: 1 }, dnd: 2, schedule: { monday: { from: 900, dnd: true } }, usePrivacyTemplate: true };
    const entries = userValueEntries(values);
    assert.deepEqual(entries, {
      'group.messagesSetting': 3,
      'oneOnOne.reactionsSetting': 1,
      'mute.dnd': 2,
      'mute.schedule.monday.from': 900,
      'mute.schedule.monday.dnd': true,
      usePrivacyTemplate: true,
    });
    assert.deepEqual(userValuesFromEntries(entries), values);
    const junk = {
      'group.memberLeftSetting': 3,
      'group.nope': 1,
      'oneOnOne.messagesSetting': 0,
      'mute.dnd': 'on',
      'mute.schedule.funday.from': 1,
      'mute.schedule.monday.to': 1179,
      'mute.schedule.monday.from.x': 1,
      usePrivacyTemplate: 1,
      'group.messagesSetting.x': 2,
    };
    assert.deepEqual(userValuesFromEntries(junk), {});
    assert.deepEqual(userValuesFromEntries(null), {});
  });
});

describe('contact details', () => {
  it('takes e-mail addresses of the usual shape', () => {
    for (const good of ['someone@example.com', 'first.last+tag@sub.example.co.uk', "o'brien@example.ie", 'ü@exämple.de', 'x@xn--bcher-kva.example']) assert.ok(isEmailAddress(good), good);
    for (const bad of [
      '',
      'someone',
      '@example.com',
      'someone@',
      'someone@example',
      'a b@example.com',
      'a@b@example.com',
      '.a@example.com',
      'a..b@example.com',
      'a@-example.com',
      'a@example.c',
      `${'a'.repeat(65)}@example.com`,
      `a@${'b'.repeat(250)}.com`,
    ]) {
      assert.ok(!isEmailAddress(bad), bad);
    }
  });

  it('takes phone numbers in E.164', () => {
    for (const good of ['+919591128691', '+14155550123', '+12']) assert.ok(isPhoneNumber(good), good);
    for (const bad of ['919591128691', '+0123456', '+1', '+1234567890123456', '+1 415 555 0123', '+1-415-555-0123', '+１２３']) assert.ok(!isPhoneNumber(bad), bad);
  });
});
