import { sql } from 'kysely';
import type { ReceiverType } from '../db/schema.js';
import type { Executor } from '../db/transaction.js';

/** Conversations and each participant's side of a 1:1 conversation. */
export class ConversationsRepository {
  constructor(private readonly db: Executor) {}

  /**
   * Creates the conversation if it is new, and in any case holds its row lock until the
   * transaction ends, as a send does (MessagesRepository.store): edits and deletes then take
   * turns with the sends of the conversation.
   */
  async lockOrCreate(appId: string, conversationId: string, type: ReceiverType, tx: Executor): Promise<{ created: boolean }> {
    const row = await tx
      .insertInto('conversations')
      .values({ app_id: appId, conversation_id: conversationId, conversation_type: type })
      // A write that changes nothing, to take the row lock when the row exists.
      .onConflict((oc) => oc.columns(['app_id', 'conversation_id']).doUpdateSet({ conversation_type: (eb) => eb.ref('conversations.conversation_type') }))
      .returning(sql<boolean>`xmax = 0`.as('created'))
      .executeTakeFirstOrThrow();
    return { created: row.created };
  }

  /** After messages are removed: when the last message was one of them, the newest left (or none). */
  async moveLastMessageBack(appId: string, conversationId: string, removedIds: string[], tx: Executor): Promise<void> {
    if (removedIds.length === 0) return;
    await tx
      .updateTable('conversations')
      .set((eb) => ({
        last_message_id: eb
          .selectFrom('messages')
          .select((m) => m.fn.max('id').as('id'))
          .where('messages.app_id', '=', appId)
          .where('messages.conversation_id', '=', conversationId),
      }))
      .where('app_id', '=', appId)
      .where('conversation_id', '=', conversationId)
      .where('last_message_id', 'in', removedIds as never[])
      .execute();
  }
}
