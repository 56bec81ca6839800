import type { Executor } from '../db/transaction.js';
import { extended } from '../domain/objects.js';
import type { GroupsRepository } from '../repositories/groups.repository.js';
import type { MessageRow } from '../repositories/messages.repository.js';
import type { UserRow, UsersRepository } from '../repositories/users.repository.js';
import type { MessagesService } from './messages.service.js';
import type { EventsRepository } from '../repositories/events.repository.js';
import { memberEvents, type MemberChange } from './views/events.view.js';
import { groupEntity, toMessage, userEntity, type ActionEntities, type Entity, type Message } from './views/messages.view.js';

/** The sender and `by` of what the app itself does (no onBehalfOf), as the vendor's examples show. */
export const APP_SENDER = 'app_system';
const APP_ENTITY: Entity = { entity: { uid: APP_SENDER, name: 'System', role: 'default', status: 'offline' }, entityType: 'user' };

/** A change to one member of a group (views/events.view.ts): its action message and its event come from it. */
export type GroupMemberEvent = MemberChange;
export type GroupMemberAction = MemberChange['action'];

/**
 * Action messages (docs/compatibility.md, "Edits, deletes, action messages and bots"): what happened to a message or to a group's members, stored in the
 * conversation it happened in, inside the caller's transaction, through storeInConversation.
 * Their entities are stored with them, as they were when it happened.
 */
export class ActionMessages {
  constructor(private readonly deps: { messages: MessagesService; users: UsersRepository; groups: GroupsRepository; events: EventsRepository }) {}

  /**
   * One groupMember action message per event, in the group's conversation, in order, and the
   * change's group_member_* events. The sender and `by` are the acting user, or `app_system`
   * when the app acts (`actor` undefined).
   */
  async groupMember(appId: string, guid: string, actor: string | undefined, events: GroupMemberEvent[], tx: Executor): Promise<Message[]> {
    if (events.length === 0) return [];
    const uids = new Set(events.map((event) => event.uid));
    if (actor !== undefined) uids.add(actor);
    const [users, group] = await Promise.all([this.deps.users.getMany(appId, [...uids], tx), this.deps.groups.get(appId, guid, tx)]);
    const byUid = new Map(users.map((user) => [user.uid, user]));
    const by = actor === undefined ? APP_ENTITY : userEntity(actor, byUid.get(actor));
    const forGroup = groupEntity(guid, group);
    const actions = events.map((event) => {
      const data: Record<string, unknown> = { action: event.action };
      // Where the vendor's SDKs read a scope change.
      if (event.scope) data.extras = { scope: event.scope };
      data.entities = { by, on: userEntity(event.uid, byUid.get(event.uid)), for: forGroup } satisfies ActionEntities;
      return { sender: actor ?? APP_SENDER, type: 'groupMember', dataJson: JSON.stringify(data) };
    });
    const rows = await this.deps.messages.storeActionsInGroup(appId, guid, actions, tx);
    // The change's events (docs/events.md), with its action messages.
    if (group) await this.deps.events.record(appId, memberEvents(group, actor === undefined ? undefined : byUid.get(actor), events, byUid), tx);
    return rows.map((row) => toMessage(row, new Map(), new Map(), { withTags: false }));
  }

  /**
   * An `edited` or `deleted` action message about `message` (rendered as it is now), in its
   * conversation. The sender is the acting user; when the app acts, the message's own sender
   * (as the vendor's example shows), so a 1:1 action stays between the two users. An action
   * message about a message held for moderation review is held with it (docs/moderation.md):
   * it carries the message, and it is released with it.
   */
  async onMessage(appId: string, action: 'edited' | 'deleted', actor: UserRow | undefined, row: MessageRow, message: Message, tx: Executor): Promise<Message> {
    const entities = message.data.entities as { receiver: Entity };
    const data = {
      action,
      entities: {
        by: actor ? userEntity(actor.uid, actor) : APP_ENTITY,
        on: { entity: message as unknown as Record<string, unknown>, entityType: 'message' },
        for: entities.receiver,
      } satisfies ActionEntities,
    };
    const target = { conversationId: row.conversation_id, receiver: row.receiver, receiverType: row.receiver_type };
    return this.store(appId, extended(target, { sender: actor?.uid ?? row.sender, type: 'message', data, held: row.held }), tx);
  }

  private async store(
    appId: string,
    message: { conversationId: string; sender: string; receiver: string; receiverType: 'user' | 'group'; type: string; data: Record<string, unknown>; held?: boolean },
    tx: Executor,
  ): Promise<Message> {
    const { data, ...rest } = message;
    const row = await this.deps.messages.storeInConversation(appId, extended(rest, { category: 'action', dataJson: JSON.stringify(data), tags: [], mentionedUids: [], muid: null }), tx);
    // Without a muid there is no conflict: a row always comes back.
    return toMessage(row!, new Map(), new Map(), { withTags: false });
  }
}
