import type { Executor } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { dataWithStatus, type ModerationStatus } from '../../domain/moderation/status.js';
import type { EventsRepository } from '../../repositories/events.repository.js';
import { heldByOfRow, type BlockedMessagesRepository } from '../../repositories/moderation/blocked-messages.repository.js';
import type { ConversationsRepository } from '../../repositories/message-store/conversations.repository.js';
import type { HeldBy, HeldMessagesRepository } from '../../repositories/message-store/held-messages.repository.js';
import type { MessageRow } from '../../repositories/messages.repository.js';
import { extended } from '../../domain/objects.js';
import { heldByView } from './moderator.js';

/**
 * Hiding and showing messages for moderation (docs/moderation.md), inside the caller's
 * transaction: a moderator's review of a message the engine held (review-blocked-message) or
 * that users flagged (blockreview-flagged-message). What a held message is and who sees it is
 * the message store's (message-store/held-messages.repository.ts) and one rule's
 * (repositories/message-visibility.ts); this decides what each review does to a message:
 * its status in `data.moderation`, its action messages, and the events.
 */
export class ModerationHolds {
  constructor(
    private readonly deps: {
      conversations: ConversationsRepository;
      held: HeldMessagesRepository;
      blocked: BlockedMessagesRepository;
      events: EventsRepository;
    },
  ) {}

  /**
   * Shows a held message again, with the held action messages about it (its sender's edits and
   * deletes while it was held), in its original place (its id): `data.moderation.status` becomes
   * `approved`, the conversation moves to it if it is the newest, and the events are recorded —
   * `message_sent` (and `user_mentioned`) if it was never shown (held when sent), the action
   * messages' `message_edited`/`message_deleted`, and `moderation_manual_approved` with what held
   * it. Answers false when there is no such message or it is not held.
   */
  async release(ctx: RequestContext, messageId: string, tx: Executor): Promise<boolean> {
    const locked = await this.lock(ctx, messageId, { heldActions: true }, tx);
    if (!locked?.message.held) return false;
    const { message, actions } = locked;
    const blocked = await this.deps.blocked.get(ctx.appId, messageId, tx);
    // Held when it was sent and never approved since: nobody has seen it, so it is sent now.
    const neverShown = blocked !== undefined && blocked.kind === 'send' && blocked.status !== 'approved';
    const released = [
      { id: messageId, dataJson: JSON.stringify(dataWithStatus(message.data, 'approved')), events: neverShown },
      ...actions.map((action) => ({ id: String(action.id), dataJson: null, events: true })),
    ];
    await this.deps.held.release(ctx.appId, message.conversation_id, message.receiver_type, released, tx);
    await this.deps.events.record(
      ctx.appId,
      [{ trigger: 'moderation_manual_approved', conversationId: message.conversation_id, messageId, data: { moderation: blocked ? [heldByView(heldByOfRow(blocked))] : [] } }],
      tx,
    );
    return true;
  }

  /**
   * Hides a shown message (a moderator disapproved or rejected it), with the shown action
   * messages about it (they carry its content): held, `data.moderation.status` set to
   * `disapproved`, the conversation moved back to its newest shown message. A message already
   * held only has its status set. Answers false when there is no such message.
   */
  async withhold(ctx: RequestContext, messageId: string, status: Extract<ModerationStatus, 'disapproved'>, tx: Executor): Promise<boolean> {
    const locked = await this.lock(ctx, messageId, { heldActions: false }, tx);
    if (!locked) return false;
    const { message, actions } = locked;
    const dataJson = JSON.stringify(dataWithStatus(message.data, status));
    if (message.held) {
      await this.deps.held.setData(ctx.appId, messageId, dataJson, tx);
      return true;
    }
    await this.deps.held.withhold(ctx.appId, message.conversation_id, [{ id: messageId, dataJson }, ...actions.map((action) => ({ id: String(action.id), dataJson: null }))], tx);
    return true;
  }

  /**
   * Holds a shown message whose edit a rule or the hook blocked (the edit already applied, the
   * conversation and message locked by the edit): held with its shown action messages, the
   * conversation moved back, what held it recorded (kind `edit`), and `moderation_engine_blocked`.
   */
  async holdEdit(ctx: RequestContext, message: MessageRow, heldBy: HeldBy, eventData: Record<string, unknown>, tx: Executor): Promise<void> {
    const id = String(message.id);
    const locked = await this.deps.held.lockWithActions(ctx.appId, id, { held: false }, tx);
    const actions = locked?.actions ?? [];
    await this.deps.held.withhold(ctx.appId, message.conversation_id, [{ id, dataJson: null }, ...actions.map((action) => ({ id: String(action.id), dataJson: null }))], tx);
    await this.deps.blocked.hold(ctx.appId, id, extended(heldBy, { kind: 'edit' as const }), tx);
    await this.deps.events.record(ctx.appId, [{ trigger: 'moderation_engine_blocked', conversationId: message.conversation_id, messageId: id, data: eventData }], tx);
  }

  /** The message and its action messages (held or shown ones), locked after their conversation, as edits lock them. */
  private async lock(ctx: RequestContext, messageId: string, options: { heldActions: boolean }, tx: Executor): Promise<{ message: MessageRow; actions: MessageRow[] } | undefined> {
    const head = await this.deps.held.find(ctx.appId, messageId, tx);
    if (!head) return undefined;
    // Released, a message goes into its conversation, created now if need be (locked before the
    // message, in the order edits lock them); withheld, it changes no conversation that does not exist.
    if (options.heldActions) await this.deps.conversations.lockOrCreate(ctx.appId, head.conversation_id, head.receiver_type, tx);
    else await this.deps.conversations.lockIfExists(ctx.appId, head.conversation_id, tx);
    return this.deps.held.lockWithActions(ctx.appId, messageId, { held: options.heldActions }, tx);
  }
}
