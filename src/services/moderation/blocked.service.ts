import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { withTransaction } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest } from '../../domain/errors.js';
import { parseMessageId } from '../../domain/messages.js';
import { toUnix } from '../../domain/time.js';
import type { BlockedMessagesRepository, BlockedRow, BlockedStatus } from '../../repositories/moderation/blocked-messages.repository.js';
import type { MessagesRepository } from '../../repositories/messages.repository.js';
import type { MessageHistoryService } from '../message-history.service.js';
import type { Message } from '../views/messages.view.js';
import type { ModerationHolds } from './holds.service.js';

/** A message held by the engine or the hook, as list-moderation-blocked-messages shows it (the vendor's example, and its status). */
export interface BlockedItem {
  ruleId: string;
  ruleName: string;
  revisionId: string;
  condition: unknown;
  message: Message;
  action: string[];
  /** What was held: a send, or an edit of a message already shown. */
  kind: 'send' | 'edit';
  status: BlockedStatus;
  reviewed: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface BlockedListInput {
  /** `pending` (the default: awaiting review), `approved`, `rejected`, or `all`. */
  status?: BlockedStatus | 'all';
  limit?: number;
  page?: number;
}

export interface BlockedReviewInput {
  status?: 'approved' | 'rejected';
  reviewed?: boolean;
}

/**
 * The messages the rules engine or the moderation hook held (docs/moderation.md), and their
 * review: list-moderation-blocked-messages, and the two vendor operations on PATCH
 * /moderation/blocked-messages/{id} (review-blocked-message and
 * approve-moderation-blocked-messages), one handler for both. Approval releases the message in
 * its original place; rejection keeps it hidden (`data.moderation.status: disapproved`).
 */
export class BlockedMessagesService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      blocked: BlockedMessagesRepository;
      messages: MessagesRepository;
      history: MessageHistoryService;
      holds: ModerationHolds;
    },
  ) {}

  async list(ctx: RequestContext, input: BlockedListInput): Promise<{ data: BlockedItem[]; meta: { current: { limit: number; count: number } } }> {
    const limit = input.limit ?? 50;
    const status = input.status ?? 'pending';
    const statuses: BlockedStatus[] = status === 'all' ? ['pending', 'approved', 'rejected'] : [status];
    const rows = await this.deps.blocked.list(ctx.appId, statuses, { offset: ((input.page ?? 1) - 1) * limit, limit });
    const data = await this.items(ctx, rows);
    return { data, meta: { current: { limit, count: data.length } } };
  }

  /**
   * A moderator's review of a held message: `approved` releases it (if a rejection had kept it
   * hidden, or it was approved before and then hidden again, it is shown again); `rejected` keeps
   * it hidden (and hides it again if it was approved before). `reviewed` is stored as given
   * (true when a status is given without it).
   */
  async review(ctx: RequestContext, rawId: string, input: BlockedReviewInput): Promise<{ success: true; message: string }> {
    if (input.status === undefined && input.reviewed === undefined) throw badRequest({ status: 'or reviewed is required: they are what a review sets' });
    const id = parseMessageId(rawId);
    const notFound = () => new AppError('ERR_BLOCKED_MESSAGE_NOT_FOUND', { params: { id: rawId } });
    if (id === undefined) throw notFound();
    await withTransaction(
      this.deps.db,
      'review_blocked_message',
      async (tx) => {
        const record = await this.deps.blocked.get(ctx.appId, id, tx, { forUpdate: true });
        if (!record) throw notFound();
        if (input.status === 'approved') await this.deps.holds.release(ctx, id, tx);
        if (input.status === 'rejected') await this.deps.holds.withhold(ctx, id, 'disapproved', tx);
        const status = input.status ?? record.status;
        await this.deps.blocked.review(ctx.appId, id, { status, reviewed: input.reviewed ?? (input.status !== undefined || record.reviewed) }, tx);
      },
      ctx.log,
    );
    const message = input.status === 'approved' ? `Message with ID ${id} has been approved.` : `Message with ID ${id} has been reviewed successfully.`;
    return { success: true, message };
  }

  /** Records with their messages, rendered as the app sees them (held or not: they are under review). */
  private async items(ctx: RequestContext, rows: BlockedRow[]): Promise<BlockedItem[]> {
    if (rows.length === 0) return [];
    const messages = await this.deps.messages.getMany(
      ctx.appId,
      rows.map((row) => row.message_id),
    );
    const rendered = await this.deps.history.render({ appId: ctx.appId, requestId: ctx.requestId, log: ctx.log }, messages, { withTags: true });
    const byId = new Map(rendered.map((message) => [message.id, message]));
    return rows.flatMap((row) => {
      const message = byId.get(row.message_id);
      if (!message) return [];
      return [
        {
          ruleId: row.rule_id,
          ruleName: row.rule_name,
          revisionId: row.revision_id,
          condition: row.condition,
          message,
          action: row.action,
          kind: row.kind,
          status: row.status,
          reviewed: row.reviewed,
          createdAt: toUnix(row.created_at),
          updatedAt: toUnix(row.updated_at),
        },
      ];
    });
  }
}
