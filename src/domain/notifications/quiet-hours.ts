/**
 * When a user is not to be disturbed (docs/notifications.md): do not disturb, and the weekly
 * schedule of the hours notifications are delivered in, read in the user's time zone (an IANA
 * name, checked with Intl).
 */

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * One day of the weekly schedule: notifications are delivered from `from` to `to` (HHMM in the
 * user's time zone, both minutes included, 0 to 2359); `from` after `to` delivers from midnight
 * to `to` and from `from` to midnight of that day. `dnd` silences the whole day.
 */
export interface DaySchedule {
  from: number;
  to: number;
  dnd: boolean;
}
export type WeekSchedule = Record<Weekday, DaySchedule>;

export interface QuietPreferences {
  /** 1 do not disturb off, 2 on. */
  dndPreferenceSetting: number;
  schedulePreferenceSetting: WeekSchedule;
}

export type QuietReason = 'dnd' | 'schedule';

/** An HHMM time of day: hours 0–23, minutes 0–59. */
export function isClockTime(hhmm: number): boolean {
  return Number.isInteger(hhmm) && hhmm >= 0 && hhmm <= 2359 && hhmm % 100 < 60;
}

// Area/Location names ("Asia/Tokyo", "America/Argentina/Buenos_Aires") and IANA's own single
// names ("UTC", "EST5EDT"); no offsets ("+05:30"), which Intl also takes.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;
export const TIME_ZONE_MAX_LENGTH = 64;

const clocks = new Map<string, Intl.DateTimeFormat>();

function clockOf(timeZone: string): Intl.DateTimeFormat | undefined {
  let clock = clocks.get(timeZone);
  if (clock === undefined) {
    try {
      clock = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'long', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    } catch {
      return undefined;
    }
    // Bounded: one per zone name asked for (a few hundred exist); names come checked.
    if (clocks.size < 2000) clocks.set(timeZone, clock);
  }
  return clock;
}

/**
 * The IANA time zone `name` names, or undefined: not one. Kept as given, but for its case where
 * it is the name Intl resolves it to ("asia/tokyo" → "Asia/Tokyo"); a link stays the link
 * ("Asia/Kolkata", which Intl resolves to "Asia/Calcutta").
 */
export function canonicalTimeZone(name: string): string | undefined {
  if (name.length > TIME_ZONE_MAX_LENGTH || !ZONE_NAME.test(name)) return undefined;
  const resolved = clockOf(name)?.resolvedOptions().timeZone;
  if (resolved === undefined) return undefined;
  return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
}

/** The weekday and HHMM time of `date` in `timeZone` (UTC when null or not a zone). */
export function localClock(timeZone: string | null, date: Date): { weekday: Weekday; hhmm: number } {
  const clock = (timeZone !== null && canonicalTimeZone(timeZone) !== undefined ? clockOf(timeZone) : undefined) ?? clockOf('UTC')!;
  let weekday = 'monday';
  let hour = 0;
  let minute = 0;
  for (const part of clock.formatToParts(date)) {
    if (part.type === 'weekday') weekday = part.value.toLowerCase();
    else if (part.type === 'hour') hour = Number(part.value) % 24;
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { weekday: weekday as Weekday, hhmm: hour * 100 + minute };
}

/** Whether `hhmm` is inside the day's delivery hours. */
export function withinDay(day: DaySchedule, hhmm: number): boolean {
  if (day.dnd) return false;
  return day.from <= day.to ? hhmm >= day.from && hhmm <= day.to : hhmm >= day.from || hhmm <= day.to;
}

/** Why the user is not to be disturbed at `at`: do not disturb is on, or the schedule's hours of that day exclude it; undefined: they may be. */
export function quietReason(mute: QuietPreferences, timeZone: string | null, at: Date): QuietReason | undefined {
  if (mute.dndPreferenceSetting === 2) return 'dnd';
  const { weekday, hhmm } = localClock(timeZone, at);
  return withinDay(mute.schedulePreferenceSetting[weekday], hhmm) ? undefined : 'schedule';
}

/** Whether the user is not to be disturbed at `at` (do not disturb, or outside the schedule's hours in their time zone). */
export function isQuietAt(mute: QuietPreferences, timeZone: string | null, at: Date): boolean {
  return quietReason(mute, timeZone, at) !== undefined;
}
