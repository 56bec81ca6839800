/** What a conversation is between: two users, or a group's members. */
export type ConversationType = 'user' | 'group';

/**
 * Conversations have two names (docs/conversations.md):
 *
 * - The **wire id**, the vendor's: `<uidA>_user_<uidB>` (the uids in byte order) for two users,
 *   `group_<guid>` for a group. Uids and guids may hold `_`, so one wire id can name several
 *   conversations: users `a` + `b_user_c` and users `a_user_b` + `c` are both
 *   `a_user_b_user_c`, and group `x_user_y` and users `group_x` + `y` are both `group_x_user_y`.
 * - The **key**, Parley's, stored in every table: `<uidA>:<uidB>` for two users (`:` is in no id),
 *   `group_<guid>` for a group. A key names one conversation: a group key has no `:`, and a
 *   pair's key splits at its one `:`.
 *
 * Everything stored and compared inside Parley is a key; the wire id is made from the key when
 * a conversation is shown (wireConversationId), and a wire id that a request names is turned
 * back into keys from what else the request says (conversationKeysOf).
 */

/** The key of the conversation between two users (see above): `<uidA>:<uidB>`, in byte order. */
export function userConversationKey(a: string, b: string): string {
  return a < b ? `${a}:${b}` : `${b}:${a}`;
}

/** The key of a group's conversation: `group_<guid>`, as its wire id. */
export function groupConversationKey(guid: string): string {
  return `group_${guid}`;
}

/** The vendor's id of the conversation between two users: `<uidA>_user_<uidB>`, in byte order. */
export function userConversationWireId(a: string, b: string): string {
  return a < b ? `${a}_user_${b}` : `${b}_user_${a}`;
}

/** The vendor's id of the conversation with this key. */
export function wireConversationId(key: string): string {
  const colon = key.indexOf(':');
  return colon < 0 ? key : `${key.slice(0, colon)}_user_${key.slice(colon + 1)}`;
}

/** The type of the conversation with this key. */
export function conversationTypeOf(key: string): ConversationType {
  return key.includes(':') ? 'user' : 'group';
}

/** What a key names: the two users of a 1:1 conversation (its one `:` splits them), or a group's guid. */
export function conversationOfKey(key: string): { type: 'user'; uids: [string, string] } | { type: 'group'; guid: string } | undefined {
  const colon = key.indexOf(':');
  if (colon >= 0) return { type: 'user', uids: [key.slice(0, colon), key.slice(colon + 1)] };
  return key.startsWith('group_') ? { type: 'group', guid: key.slice('group_'.length) } : undefined;
}

const ID = /^[a-z0-9_-]{1,100}$/;
const SEPARATOR = '_user_';

/**
 * The keys of the conversations a wire id can name, narrowed by what the request knows: the
 * user it acts for (a 1:1 conversation must be theirs) and the receiver type. Ids compare
 * lower-cased, as stored. The group's key comes first, then the pairs, split from the left.
 * Several keys remain only for a wire id that names several conversations the caller may see:
 * the callers say what they do then (docs/conversations.md).
 */
export function conversationKeysOf(wireId: string, context: { viewer?: string; type?: ConversationType } = {}): string[] {
  const id = wireId.toLowerCase();
  const keys: string[] = [];
  if (context.type !== 'user' && id.startsWith('group_') && ID.test(id.slice('group_'.length))) keys.push(id);
  if (context.type === 'group') return keys;
  for (let at = id.indexOf(SEPARATOR); at >= 0; at = id.indexOf(SEPARATOR, at + 1)) {
    const a = id.slice(0, at);
    const b = id.slice(at + SEPARATOR.length);
    // The vendor's ids put the uids in byte order: the other order names no conversation.
    if (!ID.test(a) || !ID.test(b) || a > b) continue;
    if (context.viewer !== undefined && a !== context.viewer && b !== context.viewer) continue;
    keys.push(`${a}:${b}`);
  }
  return keys;
}
