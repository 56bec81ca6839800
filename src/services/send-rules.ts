import type { ReceiverType } from '../db/schema.js';
import { groupConversationKey, userConversationKey } from '../domain/conversation-id.js';
import { AppError } from '../domain/errors.js';
import type { GroupRow } from '../repositories/groups.repository.js';
import type { SendFacts } from '../repositories/messages.repository.js';
import { guidNotFound } from './group-access.js';
import { permissionDenied } from './rbac.service.js';

// The rules of a send, as the facts its statement read answer them (MessageBatchesRepository.send
// decides pass or fail in SQL; these choose the error).

/** Where a message goes; a thread reply also names its parent. */
export type Target = { receiverType: ReceiverType; receiver: string; parentId?: string };

/** The receiver's rules, on the facts read for the send (MessageBatchesRepository.send applies the same). */
export function checkReceiver(sender: string, target: Target, facts: SendFacts): void {
  if (target.receiverType === 'user') {
    const uid = target.receiver;
    if (!facts.receiverUser || facts.receiverUser.deactivated_at !== null) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
    if (facts.senderBlockedReceiver) throw new AppError('ERR_BLOCKED_RECEIVER', { params: { uid: sender, receiver: uid } });
    if (facts.receiverBlockedSender) throw new AppError('ERR_BLOCKED_SENDER', { params: { uid: sender, receiver: uid } });
    requirePermitted(facts, target);
    return;
  }
  requireMembership(facts, sender, target.receiver);
  requirePermitted(facts, target);
}

/** The role and scope permissions of a send, as its statement decided them (see send-permissions.ts). */
export function requirePermitted(facts: SendFacts, target: Target): void {
  const deniedBy = facts.deniedBy;
  if (!deniedBy) return;
  if (deniedBy.startsWith('scope:')) {
    // A scope's permission applies only through a membership, so the scope was read.
    throw permissionDenied(deniedBy.slice('scope:'.length), { scope: facts.memberScope!, guid: target.receiver });
  }
  throw permissionDenied(deniedBy, { role: facts.sender!.role });
}

/** The sender of `facts` exists and is active. */
export function requireSender(facts: SendFacts, uid: string): void {
  if (!facts.sender || facts.sender.deactivated_at !== null) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid } });
}

/** The key of the conversation a message to `target` goes to. */
export function conversationIdOf(sender: string, target: Target): string {
  return target.receiverType === 'user' ? userConversationKey(sender, target.receiver) : groupConversationKey(target.receiver);
}

/** The group of `facts` exists and has `uid` as a member (not banned); returns it. */
export function requireMembership(facts: SendFacts, uid: string, guid: string): GroupRow {
  if (!facts.group) throw guidNotFound(guid);
  if (!facts.isMember) {
    if (facts.isBanned) throw new AppError('ERR_BANNED_GROUPMEMBER', { params: { uid, guid } });
    throw new AppError('ERR_GROUP_NOT_JOINED', { params: { uid, guid } });
  }
  return facts.group;
}

