import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { withTransaction } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest } from '../../domain/errors.js';
import { parseMessageId } from '../../domain/messages.js';
import { normalizeId } from '../../domain/normalize.js';
import { extended, type Extended } from '../../domain/objects.js';
import { toUnix } from '../../domain/time.js';
import type { MessagesRepository } from '../../repositories/messages.repository.js';
import type { FlagRow, FlagsRepository, ReasonCountRow, ReviewedRow, ReviewStatus } from '../../repositories/moderation/flags.repository.js';
import { againAsActor } from '../actor.js';
import type { MessageHistoryService } from '../message-history.service.js';
import type { UsersService } from '../users.service.js';
import type { Message } from '../views/messages.view.js';
import type { ModerationHolds } from './holds.service.js';
import { reasonNotFound, type ReasonsService } from './reasons.service.js';

/** The latest flags an item shows; `flagsCount` and `reasons` count them all. */
export const FLAGS_SHOWN = 25;
export const FLAG_PAGE = { defaultLimit: 50 } as const;

export interface Flag {
  uid: string;
  reasonId: string;
  remark?: string;
  /** When the user last flagged the message (flagging again replaces the flag). */
  createdAt: number;
}

/** A flagged message, as a moderator reviews it. */
export interface FlaggedMessageItem {
  source: 'flagged';
  messageId: string;
  status: 'pending' | ReviewStatus;
  /** The message as the app sees it (a held one included). */
  message: Message;
  flags: Flag[];
  flagsCount: number;
  /** Its flags by reason, the most given first; `name` unless the reason was deleted since. */
  reasons: Array<{ id: string; name?: string; count: number }>;
  firstFlaggedAt: number;
  lastFlaggedAt: number;
  /** The last review, when there was one (a message flagged again after an approval is pending again). */
  reviewedAt?: number;
}

/** A message the moderation engine held, which a moderator reviewed (review-blocked-message). */
export interface BlockedReviewItem {
  source: 'blocked';
  messageId: string;
  /** As the review left it: `pending` when it was marked reviewed without a decision. */
  status: 'pending' | 'approved' | 'rejected';
  message: Message;
  /** A send held before anyone saw it, or an edit of a message already shown. */
  kind: 'send' | 'edit';
  rule: { id: string; name: string; revisionId: string };
  /** The rule's condition that matched, as it was then. */
  condition?: unknown;
  action: unknown;
  heldAt: number;
  reviewedAt: number;
}

/** A flagged message a moderator reviewed. */
export type ReviewedFlaggedItem = Extended<FlaggedMessageItem, { status: ReviewStatus; reviewedAt: number }>;

export type ReviewedItem = ReviewedFlaggedItem | BlockedReviewItem;

export interface FlagPageInput {
  limit?: number;
  page?: number;
}

type Listing<T> = { data: T[]; meta: { current: { limit: number; count: number } } };

/**
 * Users' flags of messages (flag-a-message) and their review: the queue of flagged messages
 * (list-flagged-messages), a moderator's decision (blockreview-flagged-message: a disapproved
 * message is held, shown to its sender only, through ModerationHolds), and everything reviewed.
 */
export class FlagsService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      flags: FlagsRepository;
      messages: Pick<MessagesRepository, 'getMany'>;
      history: Pick<MessageHistoryService, 'requireVisible' | 'render'>;
      usersService: Pick<UsersService, 'withActor' | 'readActor'>;
      reasons: Pick<ReasonsService, 'isReason' | 'names'>;
      holds: Pick<ModerationHolds, 'withhold' | 'release'>;
    },
  ) {}

  /**
   * flag-a-message, as the onBehalfOf user, who must see the message (else it is not found, as
   * an unknown id is). One flag per user and message: flagging again replaces it. The message
   * is queued as pending (again, after an approval: a new report deserves a look).
   */
  async flag(ctx: RequestContext, rawId: string, input: { reasonId: string; remark?: string }): Promise<{ success: true; message: string; flag: Flag & { messageId: string } }> {
    const uid = flagger(ctx);
    const actorCtx = await this.deps.usersService.withActor(ctx);
    const row = await againAsActor(
      actorCtx,
      (c) => this.deps.usersService.readActor(c),
      async (current) => {
        const message = await this.deps.history.requireVisible(current, rawId);
        if (message.category === 'action') {
          throw new AppError('ERR_MESSAGE_ACTION_NOT_ALLOWED', { params: { id: rawId, action: 'flagged', reason: 'action messages record what happened' } });
        }
        const messageId = String(message.id);
        return withTransaction(
          this.deps.db,
          'flag_message',
          async (tx) => {
            if (!(await this.deps.reasons.isReason(ctx, input.reasonId, tx))) throw reasonNotFound(input.reasonId);
            // The queue's row first: concurrent flags of the message take turns on it, so none is lost.
            await this.deps.flags.queue(ctx.appId, messageId, tx);
            return this.deps.flags.upsertFlag(ctx.appId, { messageId, uid, reasonId: input.reasonId, remark: input.remark || null }, tx);
          },
          ctx.log,
        );
      },
    );
    const messageId = String(row.message_id);
    return { success: true, message: `Message with id ${messageId} has been flagged successfully.`, flag: extended({ messageId }, toFlag(row)) };
  }

  /** list-flagged-messages: the pending queue, the message flagged last first. */
  async listFlagged(ctx: RequestContext, input: FlagPageInput & { reasonId?: string; sender?: string }): Promise<Listing<FlaggedMessageItem>> {
    const page = offsetPage(input);
    const rows = await this.deps.flags.listPending(ctx.appId, {
      limit: page.limit,
      offset: page.offset,
      reasonId: input.reasonId,
      sender: input.sender === undefined ? undefined : normalizeId(input.sender),
    });
    const details = await this.details(
      ctx,
      rows.map((row) => row.message_id),
      rows.map((row) => row.message_id),
    );
    const data = rows.flatMap((row) => details.flagged(row) ?? []);
    return { data, meta: { current: { limit: page.limit, count: data.length } } };
  }

  /**
   * blockreview-flagged-message: `approved` keeps the message shown (shows it again after a
   * disapproval), `disapproved` holds it: shown to its sender only. The message moves to the
   * reviewed list in the same transaction. A reviewed message may be reviewed again.
   */
  async review(ctx: RequestContext, rawId: string, status: ReviewStatus): Promise<ReviewedFlaggedItem> {
    const id = parseMessageId(rawId);
    if (id === undefined) throw flaggedNotFound(rawId);
    const app = asApp(ctx);
    const row = await withTransaction(
      this.deps.db,
      'review_flagged_message',
      async (tx) => {
        const queued = await this.deps.flags.getForUpdate(ctx.appId, id, tx);
        if (!queued) throw flaggedNotFound(rawId);
        if (status === 'disapproved') await this.deps.holds.withhold(app, id, 'disapproved', tx);
        else if (queued.status === 'disapproved') await this.deps.holds.release(app, id, tx);
        return this.deps.flags.markReviewed(ctx.appId, id, status, tx);
      },
      ctx.log,
    );
    const item = (await this.details(ctx, [id], [id])).flagged(row);
    // Its message deleted permanently since: its flags went with it.
    if (!item) throw flaggedNotFound(rawId);
    return extended(item, { status, reviewedAt: toUnix(row.reviewed_at ?? row.updated_at) });
  }

  /**
   * list-reviewed-messages: flagged messages moderators reviewed, and messages the engine
   * held that they reviewed (`source`), the latest review first.
   */
  async listReviewed(ctx: RequestContext, input: FlagPageInput & { source?: 'flagged' | 'blocked' }): Promise<Listing<ReviewedItem>> {
    const page = offsetPage(input);
    const rows = await this.deps.flags.listReviewed(ctx.appId, { limit: page.limit, offset: page.offset, source: input.source });
    const flaggedIds = rows.filter((row) => row.source === 'flagged').map((row) => row.message_id);
    const details = await this.details(
      ctx,
      rows.map((row) => row.message_id),
      flaggedIds,
    );
    const data = rows.flatMap((row): ReviewedItem[] => {
      if (row.source === 'blocked') {
        const blocked = details.blocked(row);
        return blocked ? [blocked] : [];
      }
      const status = row.status as ReviewStatus;
      const item = details.flagged({ message_id: row.message_id, status, created_at: row.created_at, reviewed_at: row.reviewed_at });
      return item ? [extended(item, { status, reviewedAt: toUnix(row.reviewed_at) })] : [];
    });
    return { data, meta: { current: { limit: page.limit, count: data.length } } };
  }

  /**
   * What the items of a page show: their messages rendered as the app sees them (held ones
   * too: moderators review them), the flags of the flagged ones, and the app's reason names.
   * A message deleted permanently meanwhile has no item.
   */
  private async details(ctx: RequestContext, messageIds: string[], flaggedIds: string[]) {
    const app = asApp(ctx);
    const [rows, flags, names] = await Promise.all([
      this.deps.messages.getMany(ctx.appId, [...new Set(messageIds)]),
      this.deps.flags.flagsOf(ctx.appId, [...new Set(flaggedIds)], FLAGS_SHOWN),
      flaggedIds.length > 0 ? this.deps.reasons.names(ctx) : Promise.resolve(new Map<string, string>()),
    ]);
    const messages = new Map((await this.deps.history.render(app, rows, { withTags: true })).map((message) => [message.id, message]));
    const flagsOf = groupBy(flags.flags, (flag) => flag.message_id);
    const countsOf = groupBy(flags.counts, (count) => count.message_id);
    return {
      flagged: (row: { message_id: string; status: FlaggedMessageItem['status']; created_at: Date; reviewed_at: Date | null }): FlaggedMessageItem | undefined => {
        const message = messages.get(row.message_id);
        if (!message) return undefined;
        return flaggedItem(row, message, flagsOf.get(row.message_id) ?? [], countsOf.get(row.message_id) ?? [], names);
      },
      blocked: (row: ReviewedRow): BlockedReviewItem | undefined => {
        const message = messages.get(row.message_id);
        return message ? blockedItem(row, message) : undefined;
      },
    };
  }
}

function flaggedItem(
  row: { message_id: string; status: FlaggedMessageItem['status']; created_at: Date; reviewed_at: Date | null },
  message: Message,
  flags: FlagRow[],
  counts: ReasonCountRow[],
  names: Map<string, string>,
): FlaggedMessageItem {
  const reasons = counts
    .map((count) => {
      const name = names.get(count.reason_id);
      return name === undefined ? { id: count.reason_id, count: count.count } : { id: count.reason_id, name, count: count.count };
    })
    .sort((a, b) => b.count - a.count || (a.id < b.id ? -1 : 1));
  const last = counts.reduce((latest, count) => Math.max(latest, count.last_at.getTime()), row.created_at.getTime());
  const item: FlaggedMessageItem = {
    source: 'flagged',
    messageId: row.message_id,
    status: row.status,
    message,
    flags: flags.map(toFlag),
    flagsCount: counts.reduce((sum, count) => sum + count.count, 0),
    reasons,
    firstFlaggedAt: toUnix(row.created_at),
    lastFlaggedAt: Math.floor(last / 1000),
  };
  if (row.reviewed_at) item.reviewedAt = toUnix(row.reviewed_at);
  return item;
}

function blockedItem(row: ReviewedRow, message: Message): BlockedReviewItem {
  const item: BlockedReviewItem = {
    source: 'blocked',
    messageId: row.message_id,
    status: row.status === 'disapproved' ? 'rejected' : row.status,
    message,
    kind: row.kind ?? 'send',
    rule: { id: row.rule_id ?? '', name: row.rule_name ?? '', revisionId: row.revision_id ?? '' },
    action: row.action,
    heldAt: toUnix(row.created_at),
    reviewedAt: toUnix(row.reviewed_at),
  };
  if (row.condition !== null && row.condition !== undefined) item.condition = row.condition;
  return item;
}

function toFlag(row: FlagRow): Flag {
  const flag: Flag = { uid: row.uid, reasonId: row.reason_id, createdAt: toUnix(row.created_at) };
  if (row.remark !== null) flag.remark = row.remark;
  return flag;
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

function offsetPage(input: FlagPageInput): { limit: number; offset: number } {
  const limit = input.limit ?? FLAG_PAGE.defaultLimit;
  return { limit, offset: ((input.page ?? 1) - 1) * limit };
}

/** The request as the app's: moderation reads and reviews messages as the app sees them, whoever onBehalfOf names. */
function asApp(ctx: RequestContext): RequestContext {
  return extended(ctx, { onBehalfOf: undefined });
}

function flagger(ctx: RequestContext): string {
  if (ctx.onBehalfOf === undefined) throw badRequest({ onBehalfOf: 'is required: it names the user who flags the message' });
  return ctx.onBehalfOf;
}

function flaggedNotFound(id: string): AppError {
  return new AppError('ERR_FLAGGED_MESSAGE_NOT_FOUND', { params: { id } });
}
