import { sql } from 'kysely';
import type { ReceiverType } from '../../db/schema.js';
import type { Executor } from '../../db/transaction.js';
import { lockConversations, moveLastMessageBack } from './conversation-moves.js';

/** A conversation's row, locked or moved back by the writes that change its messages without storing one (conversation-moves.ts). */
export class ConversationsRepository {
  /**
   * Creates the conversation if it is new, and in any case holds its row lock until the
   * transaction ends, as a send does: edits and deletes then take turns with the sends of the
   * conversation.
   */
  async lockOrCreate(appId: string, conversationId: string, type: ReceiverType, tx: Executor): Promise<{ created: boolean }> {
    const created = await lockConversations(appId, sql`select ${conversationId}::text, ${type}::text, now(), now()`).execute(tx);
    return { created: created.rows.length > 0 };
  }

  /**
   * Holds the conversation's row lock until the transaction ends if the conversation exists (a
   * conversation whose messages are all held has none yet, and gets one only when one is released).
   */
  async lockIfExists(appId: string, conversationId: string, tx: Executor): Promise<boolean> {
    const result = await sql`select 1 from conversations where app_id = ${appId} and conversation_id = ${conversationId} for no key update`.execute(tx);
    return result.rows.length > 0;
  }

  /** After messages are removed: when the last message was one of them, the newest left (or none). */
  async moveLastMessageBack(appId: string, conversationId: string, removedIds: string[], tx: Executor): Promise<void> {
    if (removedIds.length === 0) return;
    await moveLastMessageBack(appId, [conversationId], removedIds).execute(tx);
  }
}
