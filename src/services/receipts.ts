import type { Executor } from '../db/transaction.js';
import { toUnix } from '../domain/time.js';
import type { ConversationStateRow, ConversationStatesRepository } from '../repositories/conversation-states.repository.js';
import type { MessageRow } from '../repositories/messages.repository.js';

/** What a message's receipts are read from. */
type ReceiptRow = Pick<MessageRow, 'id' | 'sender' | 'receiver' | 'receiver_type' | 'conversation_id' | 'delivered_at' | 'read_at'>;

export interface Receipt {
  deliveredAt?: number;
  readAt?: number;
}

/**
 * Whose receipts a message shows: a 1:1 message its receiver's (the sender sees whether it
 * arrived and was read; the receiver sees when they did); a group message the viewer's own,
 * for messages they received (per-member receipts of a group are not kept per message).
 */
function readerOf(row: ReceiptRow, viewer: string | undefined): string | undefined {
  if (row.receiver_type === 'user') return row.receiver;
  return viewer !== undefined && row.sender !== viewer ? viewer : undefined;
}

/**
 * The receipts of a page of messages, from one read of the watermarks involved. A message is
 * delivered (read) when the reader's watermark reached its id; the time shown is when that
 * watermark last moved.
 */
export async function loadReceipts(
  states: ConversationStatesRepository,
  appId: string,
  rows: MessageRow[],
  viewer: string | undefined,
  tx?: Executor,
): Promise<(row: MessageRow) => Receipt | undefined> {
  const pairs = new Map<string, { uid: string; conversationId: string }>();
  for (const row of rows) {
    const uid = readerOf(row, viewer);
    if (uid !== undefined) pairs.set(`${uid}\u0000${row.conversation_id}`, { uid, conversationId: row.conversation_id });
  }
  return receiptsFrom(await states.getMany(appId, [...pairs.values()], tx), viewer);
}

/**
 * The receipts of messages, from conversation states already read for them (those of
 * loadReceipts, or more: only the states of each message's reader are used).
 */
export function receiptsFrom(found: ConversationStateRow[], viewer: string | undefined): (row: ReceiptRow) => Receipt {
  // No state read: only a message's own receipts (most pages of a conversation nobody marked).
  if (found.length === 0) return sourceReceipt;
  const byKey = new Map<string, ConversationStateRow>(found.map((state) => [`${state.uid}\u0000${state.conversation_id}`, state]));
  return (row) => {
    const uid = readerOf(row, viewer);
    const state = uid === undefined ? undefined : byKey.get(`${uid}\u0000${row.conversation_id}`);
    const receipt: Receipt = sourceReceipt(row);
    if (!state) return receipt;
    const id = BigInt(row.id);
    if (receipt.deliveredAt === undefined && state.delivered_message_id !== null && state.delivered_at && BigInt(state.delivered_message_id) >= id) {
      receipt.deliveredAt = toUnix(state.delivered_at);
    }
    if (receipt.readAt === undefined && state.read_message_id !== null && state.read_at && BigInt(state.read_message_id) >= id) receipt.readAt = toUnix(state.read_at);
    return receipt;
  };
}

/** An imported message's own receipts (its source system's deliveredAt/readAt), if any. */
export function sourceReceipt(row: ReceiptRow): Receipt {
  const receipt: Receipt = {};
  if (row.delivered_at) receipt.deliveredAt = toUnix(row.delivered_at);
  if (row.read_at) receipt.readAt = toUnix(row.read_at);
  return receipt;
}

/** Adds a message's receipts to it. */
export function withReceipt<M extends Receipt>(message: M, receipt: Receipt | undefined): M {
  if (receipt?.deliveredAt !== undefined) message.deliveredAt = receipt.deliveredAt;
  if (receipt?.readAt !== undefined) message.readAt = receipt.readAt;
  return message;
}
