import type { ReceiverType } from '../db/schema.js';
import { groupConversationKey, userConversationKey } from '../domain/conversation-id.js';
import { AppError } from '../domain/errors.js';
import type { GroupRow } from '../repositories/groups.repository.js';
import type { SendFacts, SendRefusal } from '../repositories/send-checks.js';
import { guidNotFound } from './group-access.js';
import { permissionDenied } from './rbac.service.js';

// The rules of a send are decided in SQL, in the statement that reads their facts and stores the
// sends that pass (repositories/send-checks.ts); here each refusal becomes its error. A read of
// a group's history checks the membership itself (requireMembership).

/** Where a message goes; a thread reply also names its parent. */
export type Target = { receiverType: ReceiverType; receiver: string; parentId?: string };

/**
 * The error of a send that its statement refused (SendFacts.refused: the rules are decided in
 * SQL, repositories/send-checks.ts), with the parameters the catalogue's message names.
 */
export function refusalError(facts: SendFacts, sender: string, target: Target): AppError {
  const refused = facts.refused;
  if (refused === null) throw new Error('refusalError of a send that no rule refused');
  return REFUSAL_ERRORS[refused](facts, sender, target);
}

const REFUSAL_ERRORS: Record<SendRefusal, (facts: SendFacts, sender: string, target: Target) => AppError> = {
  sender_not_found: (_facts, sender) => new AppError('ERR_UID_NOT_FOUND', { params: { uid: sender } }),
  receiver_not_found: (_facts, _sender, target) => new AppError('ERR_UID_NOT_FOUND', { params: { uid: target.receiver } }),
  sender_blocked_receiver: (_facts, sender, target) => new AppError('ERR_BLOCKED_RECEIVER', { params: { uid: sender, receiver: target.receiver } }),
  receiver_blocked_sender: (_facts, sender, target) => new AppError('ERR_BLOCKED_SENDER', { params: { uid: sender, receiver: target.receiver } }),
  group_not_found: (_facts, _sender, target) => guidNotFound(target.receiver),
  banned: (_facts, sender, target) => new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid: sender, guid: target.receiver } }),
  not_a_member: (_facts, sender, target) => new AppError('ERR_GROUP_NOT_JOINED', { params: { uid: sender, guid: target.receiver } }),
  denied: (facts, _sender, target) => {
    const deniedBy = facts.deniedBy!;
    // A scope's permission applies only through a membership, so the scope was read.
    if (deniedBy.startsWith('scope:')) return permissionDenied(deniedBy.slice('scope:'.length), { scope: facts.memberScope!, guid: target.receiver });
    return permissionDenied(deniedBy, { role: facts.sender!.role });
  },
};

/** The key of the conversation a message to `target` goes to. */
export function conversationIdOf(sender: string, target: Target): string {
  return target.receiverType === 'user' ? userConversationKey(sender, target.receiver) : groupConversationKey(target.receiver);
}

/** What a read of a group's history checks: the group, and the viewer's membership and ban. */
export type MembershipFacts = Pick<SendFacts, 'sender' | 'group' | 'isMember' | 'isBanned'>;

/**
 * A read's rule (a send's are decided in SQL): the group exists and has `uid` as a member, not
 * banned; returns it.
 */
export function requireMembership(facts: MembershipFacts, uid: string, guid: string): GroupRow {
  if (!facts.group) throw guidNotFound(guid);
  if (!facts.isMember) {
    if (facts.isBanned) throw new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid, guid } });
    throw new AppError('ERR_GROUP_NOT_JOINED', { params: { uid, guid } });
  }
  return facts.group;
}
