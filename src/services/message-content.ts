import { AppError, badRequest } from '../domain/errors.js';
import { MEDIA_TYPES, MESSAGE_TYPES, mentionedUids, SENDABLE_CATEGORIES } from '../domain/messages.js';
import { LIMITS, normalizeTags } from '../domain/normalize.js';

// The content of a message: what a send (or an edit) may carry, checked the same whoever
// receives it.

export interface MessageDataInput {
  text?: string;
  attachments?: Array<Record<string, unknown>>;
  customData?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface SendMessageInput {
  receiver?: string;
  receiverType?: string;
  category?: string;
  type?: string;
  data?: MessageDataInput;
  muid?: string;
  tags?: string[];
  multipleReceivers?: { uids?: string[]; guids?: string[] };
}

/** A validated message, ready to be stored for any receiver. */
export interface Prepared {
  category: string;
  type: string;
  dataJson: string;
  /** What dataJson holds. */
  data: Record<string, unknown>;
  tags: string[];
  mentioned: string[];
  muid: string | null;
}

/** The content rules of a message, whoever receives it (and of an edit). */
export function prepare(input: SendMessageInput): Prepared {
  const category = input.category ?? 'message';
  if (!(SENDABLE_CATEGORIES as readonly string[]).includes(category)) {
    throw new AppError('ERR_INVALID_MESSAGE_CATEGORY', { params: { category } });
  }
  let type = input.type;
  if (category === 'message') {
    type ??= 'text';
    if (!(MESSAGE_TYPES as readonly string[]).includes(type)) throw new AppError('ERR_INVALID_MESSAGE_TYPE', { params: { type, category } });
  } else if (!type?.trim()) {
    throw new AppError('ERR_EMPTY_MESSAGE_TYPE');
  }
  // What the server writes (entities, mentions, reactions, the moderation status) a client cannot send.
  const { entities: _entities, mentions: _mentions, reactions: _reactions, moderation: _moderation, ...data } = input.data ?? {};
  if (category === 'message' && type === 'text' && !data.text?.trim()) throw new AppError('ERR_EMPTY_MESSAGE_TEXT');
  if (category === 'message' && (MEDIA_TYPES as readonly string[]).includes(type)) {
    const hasFile = (data.attachments ?? []).some((attachment) => typeof attachment.url === 'string' && attachment.url !== '') || typeof data.url === 'string';
    if (!hasFile) throw new AppError('ERR_EMPTY_MESSAGE_FILE', { params: { type } });
  }
  if (category === 'custom' && (data.customData === undefined || data.customData === null)) throw new AppError('ERR_EMPTY_CUSTOM_DATA');
  const dataJson = JSON.stringify(data);
  if (Buffer.byteLength(dataJson, 'utf8') > LIMITS.messageDataBytes) {
    throw badRequest({ data: `must be at most ${LIMITS.messageDataBytes} bytes when serialised as JSON` });
  }
  const mentioned = mentionedUids(data.text);
  if (mentioned.length > LIMITS.mentionsPerMessage) {
    throw badRequest({ 'data.text': `may mention at most ${LIMITS.mentionsPerMessage} distinct users` });
  }
  return {
    category,
    type,
    dataJson,
    data,
    tags: normalizeTags(input.tags ?? []),
    mentioned,
    muid: input.muid ?? null,
  };
}
