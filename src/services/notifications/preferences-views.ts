import { GROUP_PATCH_NAMES, ONE_ON_ONE_PATCH_NAMES } from '../../domain/notifications/preferences-input.js';
import type { AppNotificationSettings, EffectivePreferences, MutedConversation, Sound, Templates, WeekSchedule } from '../../domain/notifications/preferences.js';

/** A user's preferences as notifications-push-list-preferences answers them: what applies to them, with the app's sounds and templates. */
export interface UserPreferencesView {
  preferences: Pick<EffectivePreferences, 'group' | 'oneOnOne' | 'mute' | 'usePrivacyTemplate'>;
  sound: Sound;
  templates: Templates;
}

export function userPreferencesView(effective: EffectivePreferences, app: AppNotificationSettings): UserPreferencesView {
  return {
    preferences: { group: effective.group, oneOnOne: effective.oneOnOne, mute: effective.mute, usePrivacyTemplate: effective.usePrivacyTemplate },
    sound: app.sound,
    templates: app.templates,
  };
}

/** A user's preferences in the vendor's names of a change (notifications-push-reset-preferences answers so). */
export interface ResetPreferencesView {
  groupPreferences: Record<string, number>;
  oneOnOnePreferences: Record<string, number>;
  mutePreferences: { dnd: number; schedule: WeekSchedule };
  usePrivacyTemplate: boolean;
}

export function resetPreferencesView(effective: EffectivePreferences): ResetPreferencesView {
  return {
    groupPreferences: Object.fromEntries(Object.entries(GROUP_PATCH_NAMES).map(([name, field]) => [name, effective.group[field]])),
    oneOnOnePreferences: Object.fromEntries(Object.entries(ONE_ON_ONE_PATCH_NAMES).map(([name, field]) => [name, effective.oneOnOne[field]])),
    mutePreferences: { dnd: effective.mute.dndPreferenceSetting, schedule: effective.mute.schedulePreferenceSetting },
    usePrivacyTemplate: effective.usePrivacyTemplate,
  };
}

/** A muted conversation as notifications-push-list-muted answers it: `until` only when the mute ends. */
export function mutedConversationView(mute: MutedConversation): { id: string; type: string; until?: number } {
  return mute.until === null ? { id: mute.id, type: mute.type } : { id: mute.id, type: mute.type, until: mute.until };
}
