import type { RequestContext } from '../domain/context.js';
import { groupConversationKey, userConversationKey } from '../domain/conversation-id.js';
import { AppError, badRequest } from '../domain/errors.js';
import { requireShown } from '../domain/moderation/status.js';
import { LIMITS, normalizeId } from '../domain/normalize.js';
import type { MessageRow, MessagesRepository } from '../repositories/messages.repository.js';
import type { MessagesService } from './messages.service.js';
import type { MessageHistoryService } from './message-history.service.js';
import type { SendMessageInput } from './message-content.js';
import type { Target } from './send-rules.js';
import type { Message } from './views/messages.view.js';
import type { ActorContext } from './actor.js';

export interface ThreadPageInput {
  perPage?: number;
  page?: number;
}

/** As the vendor's example: the page size and count, and the last reply of the page. */
export interface ThreadListMeta {
  current: { limit: number; count: number };
  next?: { affix: 'append'; id: string; sentAt: number };
}

/** Thread replies: sent through MessagesService's send path, listed by parent. */
export class ThreadsService {
  constructor(
    private readonly deps: {
      messages: MessagesRepository;
      messagesService: MessagesService;
      history: MessageHistoryService;
    },
  ) {}

  /**
   * send-thread-message: a reply, as the onBehalfOf user, in the parent's conversation, under
   * the rules of send-message; the parent's replyCount grows in the same transaction.
   */
  async send(ctx: RequestContext, rawParentId: string, input: SendMessageInput): Promise<Message> {
    if (ctx.onBehalfOf === undefined) throw badRequest({ onBehalfOf: 'is required: it names the sender' });
    if (input.multipleReceivers) throw badRequest({ multipleReceivers: "cannot be used in a thread: a reply goes to its parent's conversation" });
    const sent = await this.deps.messagesService.send(ctx, input, () => this.replyTarget(ctx, rawParentId, input));
    return sent as Message;
  }

  /** Where a reply to this parent goes, once the parent is known to be visible and threadable. */
  private async replyTarget(ctx: RequestContext, rawParentId: string, input: SendMessageInput): Promise<Target> {
    const sender = ctx.onBehalfOf!;
    const parent = await this.deps.history.requireVisible(ctx, rawParentId);
    const id = String(parent.id);
    requireShown(parent, 'replied to');
    if (parent.parent_id !== null) throw new AppError('ERR_MESSAGE_THREAD_NESTING', { params: { id } });
    // Action messages record what happened to a group or message: nothing to reply to.
    if (parent.category === 'action') throw new AppError('ERR_WRONG_MESSAGE_THREAD_CATEGORY', { params: { id, category: parent.category } });
    const target: Target =
      parent.receiver_type === 'group'
        ? { receiverType: 'group', receiver: parent.receiver, parentId: id }
        : { receiverType: 'user', receiver: parent.sender === sender ? parent.receiver : parent.sender, parentId: id };
    checkBodyReceiver(parent, sender, input);
    return target;
  }

  /** list-all-thread-messages: a parent's replies, oldest first, by page (as the vendor's parameters). */
  async list(ctx: ActorContext, rawParentId: string, input: ThreadPageInput): Promise<{ data: Message[]; meta: ThreadListMeta }> {
    const parent = await this.deps.history.requireVisible(ctx, rawParentId);
    const perPage = input.perPage ?? LIMITS.perPageDefault;
    const page = input.page ?? 1;
    const rows = await this.deps.messages.listReplies(ctx.appId, String(parent.id), { offset: (page - 1) * perPage, limit: perPage }, ctx.onBehalfOf);
    // No withTags parameter here: replies carry their tags, as get-message-details does.
    const data = await this.deps.history.render(ctx, rows, { withTags: true });
    const meta: ThreadListMeta = { current: { limit: perPage, count: data.length } };
    const last = data[data.length - 1];
    if (last) meta.next = { affix: 'append', id: last.id, sentAt: last.sentAt };
    return { data, meta };
  }
}

/** The vendor's body takes receiver and receiverType: when given, they must name the parent's conversation. */
function checkBodyReceiver(parent: MessageRow, sender: string, input: SendMessageInput): void {
  const receiver = input.receiver?.trim();
  const type = input.receiverType;
  if (type !== undefined && type !== 'user' && type !== 'group') {
    throw new AppError('ERR_INVALID_RECEIVER_TYPE', { params: { receiverType: type } });
  }
  const wrong = () => new AppError('ERR_WRONG_MESSAGE_THREAD', { params: { id: String(parent.id) } });
  if (type !== undefined && type !== parent.receiver_type) throw wrong();
  if (!receiver) return;
  const kind = type ?? parent.receiver_type;
  const conversationId = kind === 'group' ? groupConversationKey(normalizeId(receiver)) : userConversationKey(sender, normalizeId(receiver));
  if (conversationId !== parent.conversation_id) throw wrong();
}
