import { sql, type Selectable } from 'kysely';
import type { MemberScope, MessageReactionsTable } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';

export type ReactionRow = Selectable<MessageReactionsTable>;

/** A message's count of one reaction, and whether the viewer is among those who reacted. */
export interface ReactionCount {
  reaction: string;
  count: number;
  reactedByMe: boolean;
}

/** Reactions to messages. The message row itself is locked through MessagesRepository. */
/** The reaction a change added or removed. */
export interface ReactionChange {
  id: string;
  reacted_at: Date;
}

export class ReactionsRepository {
  constructor(private readonly db: Executor) {}

  /** Adds a reaction; false when the user had already reacted so. */
  async add(appId: string, messageId: string, reaction: string, uid: string, tx: Executor = this.db): Promise<ReactionChange | undefined> {
    return tx
      .insertInto('message_reactions')
      .values({ app_id: appId, message_id: messageId, reaction, uid })
      .onConflict((oc) => oc.columns(['app_id', 'message_id', 'reaction', 'uid']).doNothing())
      .returning(['id', 'reacted_at'])
      .executeTakeFirst();
  }

  /** Removes a reaction; undefined when the user had not reacted so. */
  async remove(appId: string, messageId: string, reaction: string, uid: string, tx: Executor = this.db): Promise<ReactionChange | undefined> {
    return tx
      .deleteFrom('message_reactions')
      .where('app_id', '=', appId)
      .where('message_id', '=', messageId as never)
      .where('reaction', '=', reaction)
      .where('uid', '=', uid)
      .returning(['id', 'reacted_at'])
      .executeTakeFirst();
  }

  /** How many distinct reactions a message has, and whether `reaction` is one of them. */
  async distinct(appId: string, messageId: string, reaction: string, tx: Executor = this.db): Promise<{ count: number; has: boolean }> {
    const row = await tx
      .selectFrom('message_reactions')
      .select([sql<string>`count(distinct reaction)`.as('count'), sql<boolean | null>`bool_or(reaction = ${reaction})`.as('has')])
      .where('app_id', '=', appId)
      .where('message_id', '=', messageId as never)
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), has: row.has === true };
  }

  /** A page of a message's reactions (of one kind, when given), in the order they were added. */
  async list(
    appId: string,
    messageId: string,
    page: { reaction?: string; afterId?: string; limit: number; reactorsIn?: { guid: string; scopes: MemberScope[] } },
    tx: Executor = this.db,
  ): Promise<ReactionRow[]> {
    let query = tx
      .selectFrom('message_reactions as r')
      .selectAll('r')
      .where('r.app_id', '=', appId)
      .where('r.message_id', '=', messageId as never);
    if (page.reaction !== undefined) query = query.where('r.reaction', '=', page.reaction);
    const reactorsIn = page.reactorsIn;
    if (reactorsIn) {
      // Only reactions of the group's members whose scope is now one of these.
      query = query.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('group_members as m')
            .select(sql`1`.as('one'))
            .where('m.app_id', '=', appId)
            .where('m.guid', '=', reactorsIn.guid)
            .whereRef('m.uid', '=', 'r.uid')
            .where('m.scope', 'in', reactorsIn.scopes),
        ),
      );
    }
    if (page.afterId !== undefined) query = query.where('r.id', '>', page.afterId as never);
    return query.orderBy('r.id', 'asc').limit(page.limit).execute();
  }

  /**
   * The reaction counts of many messages in one query, each message's reactions in the order
   * they first appeared; `reactedByMe` relative to `viewer`.
   */
  async counts(appId: string, messageIds: string[], viewer: string | undefined, tx: Executor = this.db): Promise<Map<string, ReactionCount[]>> {
    const result = new Map<string, ReactionCount[]>();
    if (messageIds.length === 0) return result;
    const mine = viewer === undefined ? sql<boolean>`false` : sql<boolean>`bool_or(uid = ${viewer})`;
    const rows = await tx
      .selectFrom('message_reactions')
      .select(['message_id', 'reaction', sql<string>`count(*)`.as('count'), mine.as('mine')])
      .where('app_id', '=', appId)
      .where('message_id', 'in', messageIds as never[])
      .groupBy(['message_id', 'reaction'])
      .orderBy('message_id')
      .orderBy(sql`min(id)`)
      .execute();
    for (const row of rows) {
      const id = String(row.message_id);
      const list = result.get(id) ?? [];
      list.push({ reaction: row.reaction, count: Number(row.count), reactedByMe: row.mine === true });
      result.set(id, list);
    }
    return result;
  }
}
