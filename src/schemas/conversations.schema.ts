import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { Data, DataWithMeta, JsonObject, ListQuery, PageQuery, PaginationMeta, Tags, UnixTime } from './common.schema.js';
import { Message } from './messages.schema.js';

export const Conversation = Type.Object(
  {
    conversationId: Type.String({ description: '<uidA>_user_<uidB> (uids sorted) or group_<guid>.' }),
    conversationType: Type.Union([Type.Literal('user'), Type.Literal('group')]),
    unreadMessageCount: Type.String({
      description: "Messages after the viewer's read mark, not their own nor action messages, as a string (capped at 100).",
    }),
    lastMessage: Type.Optional(Message),
    conversationWith: JsonObject('The other user (with blockedByMe and hasBlockedMe) or the group (with hasJoined and scope), as the viewer sees them.'),
    createdAt: UnixTime('When the conversation began for the viewer (its first message, or their joining the group).'),
    updatedAt: UnixTime('When its last message was sent.'),
    tags: Type.Optional(Type.Array(Type.String(), { description: "The viewer's tags of the conversation." })),
  },
  { description: 'A conversation, as the onBehalfOf user sees it.' },
);

export const ConversationResponse = Data(Conversation);
export const ConversationListResponse = DataWithMeta(Type.Array(Conversation), PaginationMeta);

export const ConversationIdParams = Type.Object({
  conversationId: Type.String({ minLength: 1, maxLength: 300, description: 'Id of a conversation.' }),
});

const TagList = (description: string) => Type.Optional(ListQuery(Type.String({ minLength: 1, maxLength: LIMITS.tagLength }), description));

export const ListConversationsQuery = Type.Object(
  {
    ...PageQuery,
    conversationType: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('group')], { description: 'Only 1:1 (user) or group conversations.' })),
    unread: Type.Optional(Type.Boolean({ description: 'Only conversations with unread messages.' })),
    withTags: Type.Optional(Type.Boolean({ description: "Includes the viewer's tags of each conversation." })),
    tags: TagList('Only conversations the viewer tagged with at least one of these.'),
    withUserAndGroupTags: Type.Optional(Type.Boolean({ description: 'Includes the tags of the user or group in conversationWith.' })),
    userTags: TagList('Only 1:1 conversations whose other user has at least one of these tags.'),
    groupTags: TagList('Only group conversations whose group has at least one of these tags.'),
    searchKey: Type.Optional(Type.String({ maxLength: 1000, description: "A case-insensitive part of the other user's or the group's name." })),
    // Sent by the vendor's client SDK (docs/client-api.md).
    affix: Type.Optional(Type.Union([Type.Literal('append'), Type.Literal('prepend')], { description: 'Accepted as the vendor’s client SDK sends it; conversations page by page and perPage.' })),
    withThreadSubscribed: Type.Optional(Type.Boolean({ description: 'Accepted as the vendor’s client SDK sends it; Parley has no thread subscriptions.' })),
  },
  { additionalProperties: false },
);

export const UpdateConversationBody = Type.Object({
  tags: Tags("The viewer's tags of the conversation (replacing the previous ones; [] removes them)."),
});

export const ResetUserConversationBody = Type.Object({
  conversationWith: Type.Optional(Type.String({ maxLength: 200, description: 'The uid in the path (optional; checked when given).' })),
  deleteMessagesPermanently: Type.Optional(Type.Boolean({ description: 'Deletes the conversation and its messages permanently, for both users.' })),
});

export const MarkConversationBody = Type.Object({
  messageId: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.String({ pattern: '^[0-9]{1,30}$' })], {
      description: 'A message of the conversation; default: its last message (for unread: everything is unread).',
    }),
  ),
});

export const ConversationActionResponse = Data(
  Type.Object({
    success: Type.Boolean(),
    message: Type.Optional(Type.String()),
    // The vendor's examples of the 1:1 mark-as-delivered and mark-as-read spell it so.
    Message: Type.Optional(Type.String()),
  }),
);
