import { sql } from 'kysely';
import type { Executor } from '../../db/transaction.js';
import type { HeldBy } from '../message-store/held-messages.repository.js';

/** A message held by the engine or the hook, with what held it (migration 0018). */
export interface BlockedRow {
  message_id: string;
  rule_id: string;
  rule_name: string;
  revision_id: string;
  condition: unknown;
  action: string[];
  kind: 'send' | 'edit';
  status: 'pending' | 'approved' | 'rejected';
  reviewed: boolean;
  created_at: Date;
  updated_at: Date;
}

export type BlockedStatus = BlockedRow['status'];

/** The records of messages held by the rules engine or the moderation hook, and their review. */
export class BlockedMessagesRepository {
  constructor(private readonly db: Executor) {}

  /** The record of a held message, row-locked when `forUpdate` (a review), if there is one. */
  async get(appId: string, messageId: string, tx: Executor = this.db, options: { forUpdate?: boolean } = {}): Promise<BlockedRow | undefined> {
    const result = await sql<BlockedRow>`
      select message_id::text as message_id, rule_id, rule_name, revision_id, condition, action, kind, status, reviewed, created_at, updated_at
      from moderation_blocked_messages where app_id = ${appId} and message_id = ${messageId}::bigint
      ${options.forUpdate ? sql`for update` : sql``}`.execute(tx);
    return result.rows[0];
  }

  /** A page of the app's records with one of these statuses, newest held first (by message id, in its index). */
  async list(appId: string, statuses: readonly BlockedStatus[], page: { offset: number; limit: number }, tx: Executor = this.db): Promise<BlockedRow[]> {
    const result = await sql<BlockedRow>`
      select message_id::text as message_id, rule_id, rule_name, revision_id, condition, action, kind, status, reviewed, created_at, updated_at
      from moderation_blocked_messages
      where app_id = ${appId} and status = any(${statuses}::text[])
      order by message_id desc
      offset ${page.offset} limit ${page.limit}`.execute(tx);
    return result.rows;
  }

  /**
   * Holds a shown message again because a rule blocked its edit (kind `edit`), or records a new
   * hold of a message already recorded: the record is written anew, pending.
   */
  async hold(appId: string, messageId: string, heldBy: HeldBy, tx: Executor): Promise<void> {
    await sql`
      insert into moderation_blocked_messages (app_id, message_id, rule_id, rule_name, revision_id, condition, action, kind)
      values (${appId}, ${messageId}::bigint, ${heldBy.ruleId}, ${heldBy.ruleName}, ${heldBy.revisionId},
              ${heldBy.condition === null ? null : JSON.stringify(heldBy.condition)}::jsonb, ${JSON.stringify(heldBy.action)}::jsonb, ${heldBy.kind})
      on conflict (app_id, message_id) do update
        set rule_id = excluded.rule_id, rule_name = excluded.rule_name, revision_id = excluded.revision_id, condition = excluded.condition,
            action = excluded.action, kind = excluded.kind, status = 'pending', reviewed = false, updated_at = now()`.execute(tx);
  }

  /** A moderator's review of a record: its status and whether it is reviewed. */
  async review(appId: string, messageId: string, review: { status: BlockedStatus; reviewed: boolean }, tx: Executor): Promise<void> {
    await sql`
      update moderation_blocked_messages set status = ${review.status}, reviewed = ${review.reviewed}, updated_at = now()
      where app_id = ${appId} and message_id = ${messageId}::bigint`.execute(tx);
  }
}

/** What held the message of a record, as the message store writes it (HeldBy). */
export function heldByOfRow(row: BlockedRow): HeldBy {
  return { ruleId: row.rule_id, ruleName: row.rule_name, revisionId: row.revision_id, condition: row.condition, action: row.action, kind: row.kind };
}
