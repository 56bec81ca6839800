import type { Kysely } from 'kysely';
import { UniqueViolation } from '../db/driver-errors.js';
import type { DB } from '../db/schema.js';
import { withTransaction, type Executor } from '../db/transaction.js';
import type { RequestContext } from '../domain/context.js';
import { groupConversationKey } from '../domain/conversation-id.js';
import { AppError, badRequest, uidFailure } from '../domain/errors.js';
import { LIMITS, normalizeId, normalizeIds } from '../domain/normalize.js';
import { extended } from '../domain/objects.js';
import type { SendOutcome } from '../repositories/message-store/message-batches.repository.js';
import type { MessageRow, MessagesRepository, NewMessage } from '../repositories/messages.repository.js';
import type { SendFacts } from '../repositories/send-checks.js';
import type { UsersRepository } from '../repositories/users.repository.js';
import type { UsersService } from './users.service.js';
import type { MessageStoreRepository } from '../repositories/message-store/message-store.repository.js';
import { shownText } from './views/shown-messages.js';
import { toMessage, type Message } from './views/messages.view.js';
import { againIfDeletedMeanwhile } from './deleted-meanwhile.js';
import type { MessageHistoryService } from './message-history.service.js';
import { prepare, type Prepared, type SendMessageInput } from './message-content.js';
import { conversationIdOf, refusalError, type Target } from './send-rules.js';
import type { HeldMessagesRepository } from '../repositories/message-store/held-messages.repository.js';
import type { ModerationResult, Moderator } from './moderation/moderator.js';

export type SendResult = { success: true; data: Message } | { success: false; error: { code: string; message: string } };
/** multipleReceivers: the result per receiver, under its kind. */
export interface MultiSendResult {
  uids: Record<string, SendResult>;
  guids: Record<string, SendResult>;
}

export class MessagesService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      messages: MessagesRepository;
      store: MessageStoreRepository;
      users: UsersRepository;
      /** A send checked and stored with the sends of the same moment (coalesced: container.ts). */
      send: (item: { appId: string; message: NewMessage }) => Promise<SendOutcome>;
      usersService: Pick<UsersService, 'withActor'>;
      history: MessageHistoryService;
      /** Moderation (docs/moderation.md): each message's content is moderated before it is stored. */
      moderator: Pick<Moderator, 'moderate'>;
      held: HeldMessagesRepository;
    },
  ) {}

  /**
   * send-message, as the onBehalfOf user. Each message commits in one transaction with its
   * conversation; a muid the sender used before answers the first message instead.
   * send-thread-message passes `thread`, which checks the parent once the sender is known and
   * gives the reply's target.
   */
  async send(ctx: RequestContext, input: SendMessageInput, thread?: () => Promise<Target>): Promise<Message | MultiSendResult> {
    const sender = ctx.onBehalfOf;
    if (sender === undefined) throw badRequest({ onBehalfOf: 'is required: it names the sender' });
    if (JSON.stringify(input).length > LIMITS.messageJsonChars) {
      throw badRequest({ body: `must be at most ${LIMITS.messageJsonChars} characters as JSON` });
    }
    const prepared = prepare(input);
    const targets = thread ? [] : this.targets(input);
    if (input.multipleReceivers && prepared.muid !== null) {
      throw badRequest({ muid: 'cannot be combined with multipleReceivers: one muid names one message' });
    }
    // A reply's parent and the receivers of a multi-send are checked against a known sender. A
    // single send reads nothing more: its statement checks the sender itself (sendChecks).
    if (thread || input.multipleReceivers) await this.deps.usersService.withActor(ctx);
    if (thread) {
      const target = await thread();
      const facts = await this.deps.messages.sendFacts(
        ctx.appId,
        { sender, receiver: target.receiver, receiverType: target.receiverType, category: prepared.category, type: prepared.type, dataJson: prepared.dataJson },
        { reply: true },
      );
      if (facts.refused === 'sender_not_found') throw refusalError(facts, sender, target);
      // A retried send answers its first message, whatever changed since.
      const first = prepared.muid === null ? undefined : await this.firstWithMuid(ctx, sender, prepared.muid);
      return first ?? this.sendReply(ctx, sender, target, prepared, facts);
    }
    if (!input.multipleReceivers) return this.sendNow(ctx, sender, targets[0]!, prepared);
    // The receivers' sends go together (one statement for them all), each with its own result.
    // Each commits on its own, so a failure of one is that receiver's answer: once another's
    // message is stored, the call must not answer as if nothing was (a 5xx). Only when every
    // receiver's send failed with nothing stored may a server failure be the call's answer.
    let serverFailure: unknown;
    const outcomes = await Promise.all(
      targets.map(async (target): Promise<SendResult> => {
        try {
          return { success: true, data: await this.sendNow(ctx, sender, target, prepared) };
        } catch (error) {
          if (error instanceof AppError && error.status < 500) return uidFailure(error);
          ctx.log.error({ err: error, receiver: target.receiver, receiverType: target.receiverType }, 'the send to one of several receivers failed');
          serverFailure ??= error;
          return uidFailure(error instanceof AppError ? error : new AppError('ERR_EXCEPTION'));
        }
      }),
    );
    if (serverFailure !== undefined && !outcomes.some((outcome) => outcome.success)) throw serverFailure;
    const result: MultiSendResult = { uids: {}, guids: {} };
    targets.forEach((target, n) => ((target.receiverType === 'user' ? result.uids : result.guids)[target.receiver] = outcomes[n]!));
    return result;
  }

  /** The receivers of a send: `receiver`, plus those of multipleReceivers. */
  private targets(input: SendMessageInput): Target[] {
    const targets: Target[] = [];
    if (input.receiver !== undefined && input.receiver.trim() !== '') {
      if (input.receiverType !== 'user' && input.receiverType !== 'group') {
        throw new AppError('ERR_INVALID_RECEIVER_TYPE', { params: { receiverType: input.receiverType ?? '' } });
      }
      targets.push({ receiverType: input.receiverType, receiver: normalizeId(input.receiver.trim()) });
    }
    const multiple = input.multipleReceivers;
    if (multiple) {
      for (const uid of normalizeIds(multiple.uids ?? [])) targets.push({ receiverType: 'user', receiver: uid });
      for (const guid of normalizeIds(multiple.guids ?? [])) targets.push({ receiverType: 'group', receiver: guid });
    }
    if (targets.length === 0) throw new AppError('ERR_EMPTY_RECEIVER');
    if (targets.length > LIMITS.messageReceiversPerCall) {
      throw badRequest({ multipleReceivers: `at most ${LIMITS.messageReceiversPerCall} receivers per call` });
    }
    return targets;
  }

  /**
   * A send (not a reply): checked and stored in one statement with the sends of the same moment
   * (MessageBatchesRepository.send), then answered from what that statement read.
   */
  private async sendNow(ctx: RequestContext, sender: string, target: Target, content: Prepared): Promise<Message> {
    const moderated = await this.moderate(ctx, sender, target, content);
    if (moderated.outcome === 'held') return this.sendHeld(ctx, sender, target, moderated, { reply: false });
    const message = await this.newMessage(ctx.appId, sender, target, moderated.prepared);
    if (moderated.outcome === 'approved') message.moderated = true;
    // Twice at most: an earlier message found by its muid may be deleted before it is read.
    for (let attempt = 1; ; attempt++) {
      // A sender or receiver deleted meanwhile: the statement, run again, finds them gone.
      const outcome = await this.storeOrFirst(ctx, message, () => againIfDeletedMeanwhile(() => this.deps.send({ appId: ctx.appId, message })));
      if ('first' in outcome) return outcome.first;
      const { facts, row, firstId } = outcome.stored;
      if (facts.refused === 'sender_not_found') throw refusalError(facts, sender, target);
      if (row) return this.renderSent(ctx, row, facts);
      // A retried send answers its first message, whatever changed since.
      if (firstId !== undefined) {
        const first = await this.deps.messages.get(ctx.appId, firstId);
        if (first) return (await this.deps.history.render(ctx, [first], { withTags: true }))[0]!;
        if (attempt < 2) continue;
      }
      // The statement stores every send that breaks no rule and is no retry: this one broke one.
      throw refusalError(facts, sender, target);
    }
  }

  /** A thread reply: stored in a transaction, so a parent deleted meanwhile takes it back. */
  private async sendReply(ctx: RequestContext, sender: string, target: Target, content: Prepared, facts: SendFacts): Promise<Message> {
    if (facts.refused) throw refusalError(facts, sender, target);
    const moderated = await this.moderate(ctx, sender, target, content);
    if (moderated.outcome === 'held') return this.sendHeld(ctx, sender, target, moderated, { reply: true });
    const message = await this.newMessage(ctx.appId, sender, target, moderated.prepared);
    if (moderated.outcome === 'approved') message.moderated = true;
    const outcome = await this.storeOrFirst(ctx, message, () => withTransaction(this.deps.db, 'send_reply', (tx) => this.storeInConversation(ctx.appId, message, tx), ctx.log));
    return 'first' in outcome ? outcome.first : this.renderSent(ctx, outcome.stored, facts);
  }

  /** The content of a message to `target`, moderated (docs/moderation.md): a dropped message throws. */
  private moderate(ctx: RequestContext, sender: string, target: Target, content: Prepared): Promise<ModerationResult> {
    const subject = { kind: 'send' as const, sender, receiver: target.receiver, receiverType: target.receiverType, conversationId: conversationIdOf(sender, target) };
    return this.deps.moderator.moderate(ctx, content, target.parentId === undefined ? subject : extended(subject, { parentId: target.parentId }));
  }

  /**
   * A send (or reply) that moderation holds for review: checked and stored held in one statement
   * (HeldMessagesRepository.storeHeld, the send's own checks), shown to its sender alone, and
   * answered as a send is. A muid the sender used before answers the first message.
   */
  private async sendHeld(ctx: RequestContext, sender: string, target: Target, moderated: Extract<ModerationResult, { outcome: 'held' }>, options: { reply: boolean }): Promise<Message> {
    const message = await this.newMessage(ctx.appId, sender, target, moderated.prepared);
    // Twice at most: an earlier message found by its muid may be deleted before it is read.
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.storeOrFirst(ctx, message, () => againIfDeletedMeanwhile(() => this.deps.held.storeHeld(ctx.appId, message, moderated.heldBy, moderated.eventData, options)));
      if ('first' in outcome) return outcome.first;
      const { facts, row, firstId, parentFound } = outcome.stored;
      if (row) return this.renderSent(ctx, row, facts);
      if (facts.refused) throw refusalError(facts, sender, target);
      if (firstId !== undefined) {
        const first = await this.firstWithMuid(ctx, sender, message.muid!);
        if (first) return first;
        if (attempt < 2) continue;
      }
      // The statement stores a send that breaks no rule and is no retry: a reply's parent went meanwhile.
      if (!parentFound) throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: target.parentId ?? '' } });
      throw new AppError('ERR_MISSION_FAILED');
    }
  }

  private async newMessage(appId: string, sender: string, target: Target, prepared: Prepared): Promise<NewMessage> {
    // Field by field, not `{ ...prepared, ... }`: see domain/objects.ts.
    const mentionedUids = await this.activeMentions(appId, prepared.mentioned);
    const message: NewMessage = {
      conversationId: conversationIdOf(sender, target),
      sender,
      receiver: target.receiver,
      receiverType: target.receiverType,
      category: prepared.category,
      type: prepared.type,
      dataJson: prepared.dataJson,
      data: prepared.data,
      tags: prepared.tags,
      mentionedUids,
      muid: prepared.muid,
      parentId: target.parentId,
    };
    // Its id and time are drawn when it is stored: the stored text leaves them out.
    message.shown = shownText(message);
    return message;
  }

  /** Stores a message; when a concurrent send with the same muid committed first, that one is the answer. */
  private async storeOrFirst<T>(ctx: RequestContext, message: NewMessage, store: () => Promise<T>): Promise<{ stored: T } | { first: Message }> {
    try {
      return { stored: await store() };
    } catch (error) {
      if (error instanceof UniqueViolation && message.muid !== null) {
        const first = await this.firstWithMuid(ctx, message.sender, message.muid);
        if (first) return { first };
      }
      throw error;
    }
  }

  /** The sender's message with this muid, rendered, if there is one. */
  private async firstWithMuid(ctx: RequestContext, sender: string, muid: string): Promise<Message | undefined> {
    const first = await this.deps.messages.getByMuid(ctx.appId, sender, muid);
    return first && (await this.deps.history.render(ctx, [first], { withTags: true }))[0];
  }

  /**
   * A message just stored, with the people its checks read. It has no reactions or receipts
   * yet, so unless it mentions others nothing more is read: it is rendered at once, its
   * entities made for it alone (the shared ones serve answers that name the same people often).
   */
  private async renderSent(ctx: RequestContext, row: MessageRow, facts: SendFacts): Promise<Message> {
    const users = new Map([[facts.sender!.uid, facts.sender!]]);
    if (facts.receiverUser) users.set(facts.receiverUser.uid, facts.receiverUser);
    if (row.mentioned_uids.every((uid) => users.has(uid))) {
      const groups = new Map(facts.group ? [[facts.group.guid, facts.group]] : []);
      return toMessage(row, users, groups, { withTags: true, shareEntities: false });
    }
    const known = { users: [...users.values()], groups: facts.group ? [facts.group] : [] };
    return (await this.deps.history.render(ctx, [row], { withTags: true, known, justStored: true }))[0]!;
  }

  /**
   * Stores a message in its conversation (see MessageStoreRepository.store), alone or inside the
   * caller's transaction. Every message enters a conversation here: sends, replies and action
   * messages. A reply whose parent is gone answers ERR_MESSAGE_ID_NOT_FOUND (the caller's
   * transaction then takes the reply back); a muid used before raises UniqueViolation. (A send
   * goes with the sends of the same moment instead: see sendNow.)
   */
  async storeInConversation(appId: string, message: NewMessage, tx: Executor): Promise<MessageRow> {
    const { row, parentFound } = await this.deps.store.store(appId, message, tx);
    if (message.parentId !== undefined && !parentFound) throw new AppError('ERR_MESSAGE_ID_NOT_FOUND', { params: { id: message.parentId } });
    return row;
  }

  /**
   * Several action messages of one change to a group (e.g. 25 members added), in order, in
   * the caller's transaction: the batch form of storeInConversation, one INSERT for them all.
   */
  async storeActionsInGroup(appId: string, guid: string, messages: Array<Pick<NewMessage, 'sender' | 'type' | 'dataJson'>>, tx: Executor): Promise<MessageRow[]> {
    if (messages.length === 0) return [];
    const actions = messages.map((message) => extended(message, { category: 'action' }));
    return this.deps.store.storeManyInGroup(appId, guid, groupConversationKey(guid), actions, tx);
  }

  /** The mentioned users who are active: only they are kept as mentions. */
  async activeMentions(appId: string, uids: string[], tx?: Executor): Promise<string[]> {
    if (uids.length === 0) return [];
    return (await this.deps.users.getMany(appId, uids, tx)).filter((user) => user.deactivated_at === null).map((user) => user.uid);
  }
}
