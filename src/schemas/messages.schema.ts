import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { Data, DataWithMeta, JsonObject, ListQuery, Tags, UnixTime, UnixTimeInput, Url } from './common.schema.js';

// receiver, receiverType, category and type are loose here: the service answers their
// problems with the vendor's codes (ERR_EMPTY_RECEIVER, ERR_INVALID_RECEIVER_TYPE, ...).
const IdList = (description: string) => Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: LIMITS.messageReceiversPerCall, description });

const Attachment = Type.Object(
  {
    url: Type.Optional(Url('URL of the attachment (stored by reference, not copied).')),
    name: Type.Optional(Type.String({ maxLength: 1000, description: 'Name of the attachment.' })),
    mimeType: Type.Optional(Type.String({ maxLength: 255, description: 'MIME type of the attachment.' })),
    extension: Type.Optional(Type.String({ maxLength: 100, description: 'Extension of the attachment.' })),
    size: Type.Optional(Type.Union([Type.String({ maxLength: 30 }), Type.Number()], { description: 'Size in bytes.' })),
  },
  { additionalProperties: true },
);

export const MessageData = Type.Object(
  {
    text: Type.Optional(Type.String({ description: 'Text of a text message; `<@uid:UID>` mentions a user.' })),
    attachments: Type.Optional(Type.Array(Attachment, { maxItems: 100, description: 'Files of an image, video, audio or file message.' })),
    customData: Type.Optional(JsonObject('Content of a custom message.')),
    metadata: Type.Optional(JsonObject('Any JSON object, kept as sent.')),
  },
  { additionalProperties: true, description: `At most ${LIMITS.messageDataBytes} bytes as JSON.` },
);

export const SendMessageBody = Type.Object({
  receiver: Type.Optional(Type.String({ maxLength: 200, description: 'uid or guid of the receiver.' })),
  receiverType: Type.Optional(Type.String({ maxLength: 20, description: 'user or group.' })),
  category: Type.Optional(Type.String({ maxLength: 20, description: 'message (default) or custom.' })),
  type: Type.Optional(Type.String({ maxLength: LIMITS.messageTypeLength, description: 'message: text (default), image, video, audio, file; custom: any type.' })),
  data: Type.Optional(MessageData),
  muid: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.muidLength, description: "The client's id of the message: a send repeated with it answers the first message." })),
  tags: Type.Optional(Tags('Tags of the message.')),
  multipleReceivers: Type.Optional(
    Type.Object(
      { uids: Type.Optional(IdList('uids to send the message to.')), guids: Type.Optional(IdList('guids to send the message to.')) },
      { description: `Sends one message to each; at most ${LIMITS.messageReceiversPerCall} receivers in all.` },
    ),
  ),
});

export const Message = Type.Object(
  {
    id: Type.String({ description: 'A string of digits; ids increase in the order messages are sent.' }),
    muid: Type.Optional(Type.String()),
    conversationId: Type.String({ description: '<uidA>_user_<uidB> (uids sorted) or group_<guid>.' }),
    sender: Type.String(),
    receiverType: Type.Union([Type.Literal('user'), Type.Literal('group')]),
    receiver: Type.String(),
    category: Type.String(),
    type: Type.String(),
    data: JsonObject('The data as sent, with `entities` (sender and receiver) and `mentions` (mentioned users).'),
    sentAt: UnixTime('Unix seconds.'),
    updatedAt: UnixTime('Unix seconds.'),
    tags: Type.Optional(Type.Array(Type.String())),
    parentId: Type.Optional(Type.String()),
    replyCount: Type.Optional(Type.Integer()),
    editedAt: Type.Optional(UnixTime('Unix seconds.')),
    editedBy: Type.Optional(Type.String()),
    deletedAt: Type.Optional(UnixTime('Unix seconds.')),
    deletedBy: Type.Optional(Type.String()),
    deliveredAt: Type.Optional(UnixTime("Unix seconds: a 1:1 message's receiver, or the viewer of a group message, received it.")),
    readAt: Type.Optional(UnixTime("Unix seconds: a 1:1 message's receiver, or the viewer of a group message, read it.")),
  },
  { description: 'A message, as the vendor returns it.' },
);

const SendResult = Type.Object({
  success: Type.Boolean(),
  data: Type.Optional(Message),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

/** A message; with multipleReceivers, the result per receiver instead. */
export const SendMessageResponse = Data(
  Type.Composite([
    Type.Partial(Message),
    Type.Object({
      uids: Type.Optional(Type.Record(Type.String(), SendResult, { description: 'multipleReceivers: the result per uid.' })),
      guids: Type.Optional(Type.Record(Type.String(), SendResult, { description: 'multipleReceivers: the result per guid.' })),
    }),
  ]),
);

const Cursor = Type.Object({
  affix: Type.Union([Type.Literal('append'), Type.Literal('prepend')]),
  id: Type.String(),
  sentAt: UnixTime('Unix seconds.'),
});
export const MessageListMeta = Type.Object({
  current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }),
  previous: Type.Optional(Cursor),
  next: Type.Optional(Cursor),
  cursor: Type.Optional(
    Type.Object(
      { id: Type.String(), sentAt: UnixTime('Unix seconds.'), affix: Type.Union([Type.Literal('append'), Type.Literal('prepend')]) },
      { description: "Where the next page in the request's direction starts (previous for prepend, next for append): send its id and affix back." },
    ),
  ),
});

export const MessageResponse = Data(Message);
export const MessageListResponse = DataWithMeta(Type.Array(Message), MessageListMeta);

export const MessageIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 40, description: 'Id of a message.' }) });

const flag = (description: string) => Type.Optional(Type.Boolean({ description }));
const MediaType = Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('audio'), Type.Literal('file')]);

/** The parameters every message list takes. */
const listFields = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.messageLimitMax, description: `Messages per page, 1–${LIMITS.messageLimitMax}; default ${LIMITS.messageLimitDefault}.` })),
  affix: Type.Optional(
    Type.Union([Type.Literal('append'), Type.Literal('prepend')], {
      description: 'append: messages after the cursor; prepend: before it. Default: append with id or sentAt, else prepend (the newest).',
    }),
  ),
  id: Type.Optional(Type.String({ pattern: '^[0-9]{1,30}$', description: 'Cursor: a message id (exclusive).' })),
  sentAt: Type.Optional(UnixTimeInput('Cursor: unix seconds (exclusive), in the direction of affix.')),
  fromTimestamp: Type.Optional(UnixTimeInput('Messages sent at or after this unix time.')),
  toTimestamp: Type.Optional(UnixTimeInput('Messages sent at or before this unix time; only with fromTimestamp.')),
  category: Type.Optional(Type.String({ maxLength: 100, description: 'Only this category.' })),
  categories: Type.Optional(ListQuery(Type.String({ maxLength: 100 }), 'Only these categories.')),
  type: Type.Optional(Type.String({ maxLength: 100, description: 'Only this type.' })),
  types: Type.Optional(ListQuery(Type.String({ maxLength: 100 }), 'Only these types.')),
  sender: Type.Optional(Type.String({ maxLength: 200, description: 'Only messages of this sender.' })),
  tags: Type.Optional(ListQuery(Type.String({ maxLength: LIMITS.tagLength }), 'Only messages having at least one of these tags.')),
  withTags: flag('Includes the tags of each message.'),
  hideReplies: flag('Leaves out thread replies.'),
  hideDeleted: flag('Leaves out deleted messages.'),
  onlyDeleted: flag('Only deleted messages.'),
  searchKey: Type.Optional(Type.String({ maxLength: 1000, description: 'Text messages containing this, case-insensitive.' })),
  hasAttachments: flag('Only media messages (true) or no media messages (false).'),
  attachmentTypes: Type.Optional(ListQuery(MediaType, 'Only media messages of these types.')),
  hasMentions: flag('Only messages that mention users (true) or none (false).'),
  mentionedUids: Type.Optional(ListQuery(Type.String({ maxLength: 200 }), 'Only messages mentioning one of these uids.')),
  hasLinks: flag('Only messages whose text has a link (true) or none (false).'),
  mentionsWithTagInfo: flag('Includes the tags of mentioned users.'),
  mentionsWithBlockedInfo: flag('With onBehalfOf: each mentioned user with blockedByMe and hasBlockedMe relative to that user.'),
  hasReactions: flag('Only messages with reactions (true) or none (false).'),
  withThreadSubscribed: flag("Accepted as the vendor's client SDK sends it; Parley has no thread subscriptions, so it changes nothing."),
};
const viewerFields = {
  myMentionsOnly: flag('With onBehalfOf: only messages mentioning that user.'),
  unread: flag("With onBehalfOf: only messages after that user's read mark, not sent by them."),
  undelivered: flag("With onBehalfOf: only messages after that user's delivered mark, not sent by them."),
};

export const ListAllMessagesQuery = Type.Object(
  {
    ...listFields,
    conversationId: Type.Optional(Type.String({ maxLength: 300, description: 'Only this conversation.' })),
    receiverType: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('group')], { description: 'Only 1:1 (user) or group messages.' })),
    hideMessagesFromBlockedUsers: flag('With onBehalfOf: leaves out messages from users that user has blocked.'),
  },
  { additionalProperties: false },
);

export const ListUserMessagesQuery = Type.Object(
  {
    ...listFields,
    ...viewerFields,
    perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.messageLimitMax, description: 'Same as limit (limit wins).' })),
  },
  { additionalProperties: false },
);

export const ListGroupMessagesQuery = Type.Object(
  {
    ...listFields,
    ...viewerFields,
    hideMessagesFromBlockedUsers: flag('With onBehalfOf: leaves out messages from users that user has blocked.'),
  },
  { additionalProperties: false },
);
