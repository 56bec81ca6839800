/** The id of the conversation between two users: `<uidA>_user_<uidB>`, the uids in byte order. */
export function userConversationId(a: string, b: string): string {
  return a < b ? `${a}_user_${b}` : `${b}_user_${a}`;
}
