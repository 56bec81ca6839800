import { badRequest } from '../../domain/errors.js';

// The ranges of the statistics (docs/stats.md): how a request's dates are read, bounded and
// rounded to what the counts are kept by.

/** A date at or above this is in milliseconds (10^11 seconds is the year 5138). */
export const MILLISECONDS_FROM = 1e11;
/** The longest range of usage metrics: 31 days, the range of the vendor's example. */
export const MAX_USAGE_SPAN_MS = 31 * 86_400_000;
/** The longest range of message metrics: a day, 288 five-minute points. */
export const MAX_MESSAGES_SPAN_MS = 86_400_000;
/** The message metrics' bucket: five minutes. */
export const BUCKET_MS = 300_000;
/** What message metrics cover without a range: the last hour, to the end of the bucket under way. */
export const DEFAULT_MESSAGES_SPAN_MS = 3_600_000;
const HOUR_MS = 3_600_000;

/** A range in milliseconds since the epoch, `from` ≤ `to`. */
export interface MsRange {
  from: number;
  to: number;
}

/** A date given in Unix seconds (the vendor's parameters) or milliseconds (≥ 10^11, as its example echoes), in milliseconds. */
export function toMs(value: number): number {
  return value >= MILLISECONDS_FROM ? value : value * 1000;
}

/** `fromDate` and `toDate` read (seconds or milliseconds each) and checked: in order, and at most `maxSpanMs` apart. */
export function readRange(fromDate: number, toDate: number, maxSpanMs: number): MsRange {
  const from = toMs(fromDate);
  const to = toMs(toDate);
  if (from > to) throw badRequest({ fromDate: 'must not be after toDate' });
  if (to - from > maxSpanMs) {
    const days = maxSpanMs / 86_400_000;
    throw badRequest({ toDate: `must be at most ${days === 1 ? 'a day' : `${days} days`} after fromDate` });
  }
  return { from, to };
}

/**
 * The UTC hours a range touches, rounded outwards (an empty range: its hour), as the days they
 * fall on (YYYY-MM-DD) each with the mask of its hours (bit h: hour h of the day).
 */
export function hoursByDay(range: MsRange): { days: string[]; masks: number[] } {
  const first = Math.floor(range.from / HOUR_MS);
  const last = Math.max(first, Math.ceil(range.to / HOUR_MS) - 1);
  const byDay = new Map<number, number>();
  for (let hour = first; hour <= last; hour++) {
    const day = Math.floor(hour / 24);
    byDay.set(day, (byDay.get(day) ?? 0) | (1 << (hour - day * 24)));
  }
  const days: string[] = [];
  const masks: number[] = [];
  for (const [day, mask] of byDay) {
    days.push(new Date(day * 86_400_000).toISOString().slice(0, 10));
    masks.push(mask);
  }
  return { days, masks };
}

/**
 * The five-minute buckets of message metrics: those a range touches, rounded outwards (an empty
 * range: its bucket); without a range, the last hour's, to the end of the bucket under way at `now`.
 */
export function bucketSpan(range: MsRange | undefined, now: number): { start: number; end: number } {
  if (!range) {
    const end = Math.floor(now / BUCKET_MS) * BUCKET_MS + BUCKET_MS;
    return { start: end - DEFAULT_MESSAGES_SPAN_MS, end };
  }
  const start = Math.floor(range.from / BUCKET_MS) * BUCKET_MS;
  return { start, end: Math.max(start + BUCKET_MS, Math.ceil(range.to / BUCKET_MS) * BUCKET_MS) };
}
