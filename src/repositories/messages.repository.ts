import { sql } from 'kysely';
import type { MemberScope, ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';
import { extended } from '../domain/objects.js';
import type { GroupRow } from './groups.repository.js';
import { type MessageRow } from './row-codecs.js';
import { sendDeniedBy, sendPermissionJoins } from './send-permissions.js';
import { type UserRow } from './users.repository.js';

export type { MessageRow } from './row-codecs.js';
export { GROUP_ROW, MESSAGE_ROW } from './row-codecs.js';

/** What sendFacts finds: see there. */
export interface SendFacts {
  sender: UserRow | undefined;
  receiverUser?: UserRow | undefined;
  senderBlockedReceiver?: boolean;
  receiverBlockedSender?: boolean;
  group?: GroupRow | undefined;
  isMember?: boolean;
  isBanned?: boolean;
  /** The sender's scope in the receiving group. */
  memberScope?: MemberScope | null;
  /** The role or scope permission that refuses the send (see send-permissions.ts), or null. */
  deniedBy?: string | null;
}

export interface NewMessage {
  conversationId: string;
  sender: string;
  receiver: string;
  receiverType: ReceiverType;
  category: string;
  type: string;
  /** Already serialised JSON, so key order and bytes are kept. */
  dataJson: string;
  /** The same data as an object, when the caller has it: the stored row then takes it as is. */
  data?: Record<string, unknown>;
  tags: string[];
  mentionedUids: string[];
  muid: string | null;
  /** A thread reply: its parent's id. */
  parentId?: string;
}

export class MessagesRepository {
  constructor(private readonly db: Executor) {}

  /**
   * What a send needs to know, in one query: the sender's row and, for a user receiver, that
   * user's row and the blocks between the two; for a group, its row and whether the sender is
   * a member or banned. Rows are absent when not found.
   */
  async sendFacts(appId: string, sender: string, receiverType: ReceiverType, receiver: string, tx: Executor = this.db): Promise<SendFacts> {
    if (receiverType === 'user') {
      const result = await sql<UserRow & { sender_blocked_receiver: boolean; receiver_blocked_sender: boolean }>`
        select u.*,
          exists (select 1 from blocked_users b where b.app_id = ${appId} and b.uid = ${sender} and b.blocked_uid = ${receiver}) as sender_blocked_receiver,
          exists (select 1 from blocked_users b where b.app_id = ${appId} and b.uid = ${receiver} and b.blocked_uid = ${sender}) as receiver_blocked_sender
        from users u where u.app_id = ${appId} and u.uid in (${sender}, ${receiver})`.execute(tx);
      const users = result.rows.map(({ sender_blocked_receiver: _a, receiver_blocked_sender: _b, ...row }) => row);
      const first = result.rows[0];
      return {
        sender: users.find((row) => row.uid === sender),
        receiverUser: users.find((row) => row.uid === receiver),
        senderBlockedReceiver: first?.sender_blocked_receiver ?? false,
        receiverBlockedSender: first?.receiver_blocked_sender ?? false,
      };
    }
    const result = await sql<UserRow & { group_json: (Omit<GroupRow, 'created_at' | 'updated_at'> & { created_at: string; updated_at: string | null }) | null; is_member: boolean; is_banned: boolean }>`
      select u.*, to_json(g) as group_json,
        exists (select 1 from group_members m where m.app_id = ${appId} and m.guid = ${receiver} and m.uid = ${sender}) as is_member,
        exists (select 1 from group_bans b where b.app_id = ${appId} and b.guid = ${receiver} and b.uid = ${sender}) as is_banned
      from (select 1) as one
      left join users u on u.app_id = ${appId} and u.uid = ${sender}
      left join groups g on g.app_id = ${appId} and g.guid = ${receiver}`.execute(tx);
    const { group_json: group, is_member: isMember, is_banned: isBanned, ...user } = result.rows[0]!;
    return {
      sender: user.uid === null ? undefined : user,
      // The group comes as JSON (its columns would collide with the user's): its times as text.
      group: group ? extended(group, { created_at: new Date(group.created_at), updated_at: group.updated_at === null ? null : new Date(group.updated_at) }) : undefined,
      isMember,
      isBanned,
    };
  }

  /**
   * The role or scope permission that refuses a thread reply, or null (the batched send decides
   * the same in its own statement: see send-permissions.ts); with the sender's scope in the group.
   */
  async replyDenial(
    appId: string,
    message: Pick<NewMessage, 'sender' | 'receiver' | 'receiverType' | 'category' | 'type' | 'dataJson'>,
    tx: Executor = this.db,
  ): Promise<{ deniedBy: string | null; memberScope: MemberScope | null }> {
    const result = await sql<{ denied_by: string | null; member_scope: MemberScope | null }>`
      select ${sendDeniedBy({ reply: true })} as denied_by, gm.scope as member_scope
      from (select ${message.sender}::text as sender, ${message.receiver}::text as receiver, ${message.receiverType}::text as receiver_type,
                   ${message.category}::text as category, ${message.type}::text as type, ${message.dataJson}::json as data) r
      left join users s on s.app_id = ${appId} and s.uid = r.sender
      left join users u on r.receiver_type = 'user' and u.app_id = ${appId} and u.uid = r.receiver
      left join group_members gm on r.receiver_type = 'group' and gm.app_id = ${appId} and gm.guid = r.receiver and gm.uid = r.sender
      ${sendPermissionJoins(appId, { reply: true })}`.execute(tx);
    const row = result.rows[0]!;
    return { deniedBy: row.denied_by, memberScope: row.member_scope };
  }

  async get(appId: string, id: string, tx: Executor = this.db): Promise<MessageRow | undefined> {
    return tx.selectFrom('messages').selectAll().where('app_id', '=', appId).where('id', '=', id as never).executeTakeFirst();
  }

  /** Messages by id (e.g. the last messages of a page of conversations); unknown ids are absent. */
  async getMany(appId: string, ids: string[], tx: Executor = this.db): Promise<MessageRow[]> {
    if (ids.length === 0) return [];
    return tx.selectFrom('messages').selectAll().where('app_id', '=', appId).where('id', 'in', ids as never[]).execute();
  }

  async getByMuid(appId: string, sender: string, muid: string, tx: Executor = this.db): Promise<MessageRow | undefined> {
    return tx
      .selectFrom('messages')
      .selectAll()
      .where('app_id', '=', appId)
      .where('sender', '=', sender)
      .where('muid', '=', muid)
      .executeTakeFirst();
  }

  /** A message, row-locked until the transaction ends: its writers (e.g. of its reactions) take turns. */
  async getForUpdate(appId: string, id: string, tx: Executor): Promise<MessageRow | undefined> {
    return tx.selectFrom('messages').selectAll().where('app_id', '=', appId).where('id', '=', id as never).forNoKeyUpdate().executeTakeFirst();
  }

  /** An edit: new content, and who edited it when. */
  async edit(
    appId: string,
    id: string,
    edit: { dataJson: string; tags: string[]; mentionedUids: string[]; editedBy: string },
    tx: Executor,
  ): Promise<MessageRow | undefined> {
    return tx
      .updateTable('messages')
      .set({
        data: edit.dataJson,
        tags: edit.tags,
        mentioned_uids: edit.mentionedUids,
        edited_by: edit.editedBy,
        edited_at: sql<Date>`now()`,
        updated_at: sql<Date>`now()`,
      })
      .where('app_id', '=', appId)
      .where('id', '=', id as never)
      .returningAll()
      .executeTakeFirst();
  }

  /** A soft delete: the message stays, marked deleted. */
  async markDeleted(appId: string, id: string, deletedBy: string, tx: Executor): Promise<MessageRow | undefined> {
    return tx
      .updateTable('messages')
      .set({ deleted_by: deletedBy, deleted_at: sql<Date>`now()`, updated_at: sql<Date>`now()` })
      .where('app_id', '=', appId)
      .where('id', '=', id as never)
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * A permanent delete: the message, and the edited/deleted action messages about it (they
   * carry its content), which come after it in its conversation. Returns the removed ids.
   */
  async deletePermanently(appId: string, conversationId: string, id: string, tx: Executor): Promise<string[]> {
    const rows = await tx
      .deleteFrom('messages')
      .where('app_id', '=', appId)
      .where('conversation_id', '=', conversationId)
      .where((eb) =>
        eb.or([
          eb('id', '=', id as never),
          eb.and([
            eb('id', '>', id as never),
            eb('category', '=', 'action'),
            eb('type', '=', 'message'),
            eb(sql<string>`data->'entities'->'on'->'entity'->>'id'`, '=', id),
          ]),
        ]),
      )
      .returning('id')
      .execute();
    return rows.map((row) => String(row.id));
  }

  /** Uncounts a permanently deleted reply on its parent. */
  async removeReply(appId: string, parentId: string, tx: Executor): Promise<void> {
    await tx
      .updateTable('messages')
      .set((eb) => ({ reply_count: eb('reply_count', '-', 1) }))
      .where('app_id', '=', appId)
      .where('id', '=', parentId as never)
      .where('reply_count', '>', 0)
      .execute();
  }

  /** A page of a thread's replies, oldest first (threads are small: the vendor pages them by number). */
  async listReplies(appId: string, parentId: string, page: { offset: number; limit: number }, tx: Executor = this.db): Promise<MessageRow[]> {
    return tx
      .selectFrom('messages')
      .selectAll()
      .where('app_id', '=', appId)
      .where('parent_id', '=', parentId)
      .orderBy('id', 'asc')
      .offset(page.offset)
      .limit(page.limit)
      .execute();
  }

}
