// The checks of the crash scenario (bench/lib/crash.ts): what the database holds, read directly,
// against what the clients were told (crash-clients.ts's Ledger).
import { sql, type Kysely } from 'kysely';
import { wireConversationId } from '../../src/domain/conversation-id.js';
import type { Ledger } from './crash-clients.js';

/** A stored message of the app, as the checks read it (its conversation by the vendor's id, as the API shows it). */
export interface StoredMessage {
  id: string;
  conversation_id: string;
  sender: string;
  category: string;
  muid: string | null;
  text: string | null;
}

export interface Stored {
  messages: StoredMessage[];
  /** Each conversation's last_message_id, and the largest id of its messages. */
  conversations: Array<{ conversation_id: string; last_message_id: string | null; max_id: string | null }>;
}

/** Everything of the app the checks need, read in one snapshot. */
export async function readStored(db: Kysely<any>, appId: string): Promise<Stored> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (tx) => {
      const messages = await sql<StoredMessage>`
      select id::text as id, conversation_id, sender, category, muid, data->>'text' as text
      from messages where app_id = ${appId} order by id`.execute(tx);
      const conversations = await sql<Stored['conversations'][number]>`
      select c.conversation_id, c.last_message_id::text as last_message_id,
             (select max(m.id) from messages m where m.app_id = c.app_id and m.conversation_id = c.conversation_id)::text as max_id
      from conversations c where c.app_id = ${appId} order by c.conversation_id`.execute(tx);
      // Stored by key (src/domain/conversation-id.ts); compared with what the API lists.
      return {
        messages: messages.rows.map((m) => ({ ...m, conversation_id: wireConversationId(m.conversation_id) })),
        conversations: conversations.rows.map((c) => ({ ...c, conversation_id: wireConversationId(c.conversation_id) })),
      };
    });
}

export interface CheckResult {
  /** The app's messages of category message (the clients' sends). */
  stored: number;
  /** Acknowledged muids found stored once with the acknowledged id. */
  ackedStored: number;
  /** Acknowledged, and not stored exactly once with the acknowledged id. */
  lostAcked: string[];
  /** Muids (or texts) stored more than once. */
  duplicates: string[];
  /** Stored messages no client sent. */
  phantoms: string[];
  /** Unanswered muids stored before the kill (committed, but the answer never arrived). */
  unansweredStored: number;
  /** Unanswered muids not stored. */
  unansweredNotStored: number;
  /** Conversations whose last_message_id is not their newest message. */
  staleConversations: string[];
  /** Each stored muid's id, for the re-send's check. */
  idByMuid: Map<string, string>;
}

/** Compares what is stored with what the clients know. */
export function check(stored: Stored, ledger: Ledger): CheckResult {
  const sends = stored.messages.filter((m) => m.category === 'message');
  const byMuid = new Map<string, StoredMessage[]>();
  const byText = new Map<string, StoredMessage[]>();
  const result: CheckResult = {
    stored: sends.length,
    ackedStored: 0,
    lostAcked: [],
    duplicates: [],
    phantoms: [],
    unansweredStored: 0,
    unansweredNotStored: 0,
    staleConversations: [],
    idByMuid: new Map(),
  };
  for (const message of sends) {
    const key = message.muid ?? `(no muid: ${message.id})`;
    const list = byMuid.get(key);
    if (list) list.push(message);
    else byMuid.set(key, [message]);
    if (message.text !== null) byText.set(message.text, [...(byText.get(message.text) ?? []), message]);
    const plan = message.muid === null ? undefined : ledger.sent.get(message.muid);
    if (!plan || plan.text !== message.text || plan.sender !== message.sender) result.phantoms.push(`${key} (id ${message.id})`);
  }
  for (const [muid, list] of byMuid) {
    if (list.length > 1) result.duplicates.push(`${muid}: ids ${list.map((m) => m.id).join(', ')}`);
    result.idByMuid.set(muid, list[0]!.id);
  }
  // The same text under different muids (or none): a copy the muid check above cannot see.
  for (const [text, list] of byText) {
    if (new Set(list.map((m) => m.muid)).size > 1) result.duplicates.push(`text "${text}": ids ${list.map((m) => m.id).join(', ')}`);
  }
  for (const [muid, { id }] of ledger.acked) {
    const found = byMuid.get(muid);
    if (found?.length === 1 && found[0]!.id === id) result.ackedStored++;
    else result.lostAcked.push(`${muid}: acknowledged as ${id}, stored as ${found ? found.map((m) => m.id).join(', ') : 'nothing'}`);
  }
  for (const muid of ledger.unanswered.keys()) {
    if (byMuid.has(muid)) result.unansweredStored++;
    else result.unansweredNotStored++;
  }
  for (const c of stored.conversations) {
    if (c.last_message_id !== c.max_id) result.staleConversations.push(`${c.conversation_id}: last ${c.last_message_id}, newest ${c.max_id}`);
  }
  return result;
}

/** A user's conversation as the list-conversations API answered it. */
export interface ListedConversation {
  uid: string;
  conversationId: string;
  unreadMessageCount: string;
  lastMessageId: string | undefined;
}

/**
 * Each listed conversation's unread count and last message against the stored messages: nobody
 * read anything, so a user's unread messages are the others' messages of the conversation (as
 * many as the API counts, `cap`), and its last message is the newest.
 */
export function checkConversations(stored: Stored, listed: ListedConversation[], cap: number): string[] {
  const problems: string[] = [];
  const newest = new Map(stored.conversations.map((c) => [c.conversation_id, c.max_id]));
  const messagesOf = new Map<string, StoredMessage[]>();
  for (const message of stored.messages) {
    const list = messagesOf.get(message.conversation_id);
    if (list) list.push(message);
    else messagesOf.set(message.conversation_id, [message]);
  }
  for (const entry of listed) {
    const others = (messagesOf.get(entry.conversationId) ?? []).filter((m) => m.sender !== entry.uid && m.category !== 'action').length;
    const expected = String(Math.min(cap, others));
    if (entry.unreadMessageCount !== expected) {
      problems.push(`${entry.uid} in ${entry.conversationId}: unread ${entry.unreadMessageCount}, expected ${expected}`);
    }
    if (entry.lastMessageId !== (newest.get(entry.conversationId) ?? undefined)) {
      problems.push(`${entry.uid} in ${entry.conversationId}: last message ${entry.lastMessageId}, newest ${newest.get(entry.conversationId)}`);
    }
  }
  const conversationsOfSends = new Set(stored.messages.filter((m) => m.category === 'message').map((m) => m.conversation_id));
  const seen = new Set(listed.map((entry) => entry.conversationId));
  for (const id of conversationsOfSends) if (!seen.has(id)) problems.push(`conversation ${id} listed for none of its users`);
  return problems;
}
