import type { RequestContext } from '../../domain/context.js';
import { badRequest } from '../../domain/errors.js';
import type { StatsRepository } from '../../repositories/stats/stats.repository.js';
import { BUCKET_MS, bucketSpan, hoursByDay, MAX_MESSAGES_SPAN_MS, MAX_USAGE_SPAN_MS, readRange, type MsRange } from './stats-ranges.js';

/** Usage metrics of a range, in the vendor's shape (`time_range` in milliseconds). */
export interface UsageMetrics {
  metrics: {
    audio_minutes: number;
    video_minutes: number;
    recorded_minutes: number;
    active_users: number;
    concurrent_users: number;
  };
  time_range: { fromDate: number; toDate: number };
}

/** One five-minute point; times in milliseconds, as strings (the vendor's shape). */
export interface MessagePoint {
  messagesSent: number;
  readReceipts: number;
  deliveryReceipts: number;
  startTime: string;
  endTime: string;
}

export interface MessageMetrics {
  startTime: string;
  endTime: string;
  dataPoints: MessagePoint[];
  appId: string;
}

/**
 * The app's usage statistics (docs/stats.md), read from the counts the aggregation keeps
 * (StatsAggregator): a range's reads are by key, whatever the traffic it covers.
 */
export class StatsService {
  constructor(
    private readonly deps: {
      stats: StatsRepository;
      now?: () => number;
    },
  ) {}

  /**
   * Usage metrics between two dates (Unix seconds, or milliseconds): the distinct users active
   * in the UTC hours the range touches. Parley has no calls and no user-facing connections
   * yet, so the minutes and the concurrent users are 0 (docs/stats.md).
   */
  async usage(ctx: RequestContext, input: { fromDate: number; toDate: number }): Promise<UsageMetrics> {
    const range = readRange(input.fromDate, input.toDate, MAX_USAGE_SPAN_MS);
    const { days, masks } = hoursByDay(range);
    const activeUsers = await this.deps.stats.activeUsers(ctx.appId, days, masks);
    return {
      metrics: { audio_minutes: 0, video_minutes: 0, recorded_minutes: 0, active_users: activeUsers, concurrent_users: 0 },
      time_range: { fromDate: range.from, toDate: range.to },
    };
  }

  /**
   * Messages sent and receipts in five-minute points: of the last hour by default, or of the
   * buckets a range touches (a Parley extension, at most a day). Every point of the span is
   * answered, those without counts as zeros.
   */
  async messages(ctx: RequestContext, input: { fromDate?: number | undefined; toDate?: number | undefined }): Promise<MessageMetrics> {
    let range: MsRange | undefined;
    if (input.fromDate !== undefined || input.toDate !== undefined) {
      if (input.fromDate === undefined) throw badRequest({ fromDate: 'is required with toDate' });
      if (input.toDate === undefined) throw badRequest({ toDate: 'is required with fromDate' });
      range = readRange(input.fromDate, input.toDate, MAX_MESSAGES_SPAN_MS);
    }
    const { start, end } = bucketSpan(range, (this.deps.now ?? Date.now)());
    const rows = await this.deps.stats.messageBuckets(ctx.appId, start / 1000, end / 1000);
    const counted = new Map(rows.map((row) => [row.start * 1000, row]));
    const dataPoints: MessagePoint[] = [];
    for (let at = start; at < end; at += BUCKET_MS) {
      const row = counted.get(at);
      dataPoints.push({
        messagesSent: row?.messagesSent ?? 0,
        readReceipts: row?.readReceipts ?? 0,
        deliveryReceipts: row?.deliveryReceipts ?? 0,
        startTime: String(at),
        endTime: String(at + BUCKET_MS),
      });
    }
    return { startTime: String(start), endTime: String(end), dataPoints, appId: ctx.appId };
  }
}
