import { Type } from '@sinclair/typebox';
import { MODERATION_ID_PATTERN, MODERATION_LIMITS } from '../domain/moderation/rules.js';
import { Data, DataWithMeta, SuccessMessage, UnixTime } from './common.schema.js';
import { Message } from './messages.schema.js';

// Reasons

export const Reason = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    createdAt: UnixTime('Unix seconds (the vendor’s list shows strings; Parley answers integers everywhere).'),
    updatedAt: UnixTime('Unix seconds.'),
    default: Type.Boolean({ description: 'A built-in reason, changed or not.' }),
  },
  { description: 'A reason users flag messages for.' },
);

const reasonFields = {
  name: Type.String({ minLength: 1, maxLength: MODERATION_LIMITS.nameLength, description: 'Display name of the reason.' }),
  description: Type.String({ maxLength: MODERATION_LIMITS.descriptionLength, description: 'Description of the reason.' }),
};

export const CreateReasonBody = Type.Object({
  id: Type.String({
    pattern: MODERATION_ID_PATTERN,
    minLength: 1,
    maxLength: MODERATION_LIMITS.idLength,
    description: 'Unique identifier of the reason: letters, digits, `-` and `_`, kept as sent.',
  }),
  name: reasonFields.name,
  description: Type.Optional(reasonFields.description),
});

export const UpdateReasonBody = Type.Object({
  name: Type.Optional(reasonFields.name),
  description: Type.Optional(reasonFields.description),
});

export const ReasonParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, description: 'Id of a reason.' }) });

export const ReasonResponse = Data(Reason);
export const ReasonListResponse = DataWithMeta(Type.Array(Reason), Type.Object({ current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }) }));
/** At the top level, as the vendor's schema shows it (not under `data`). */
export const ReasonDeleteResponse = SuccessMessage;

// Flags

export const FlagMessageBody = Type.Object({
  reasonId: Type.String({ minLength: 1, maxLength: 200, description: 'Id of a reason of the app (list-reasons).' }),
  remark: Type.Optional(Type.String({ maxLength: MODERATION_LIMITS.remarkLength, description: 'Why the user flags the message.' })),
});

const Flag = Type.Object({
  uid: Type.String({ description: 'The user who flagged the message.' }),
  reasonId: Type.String(),
  remark: Type.Optional(Type.String()),
  createdAt: UnixTime('When the user last flagged the message (flagging again replaces the flag).'),
});

export const FlagMessageResponse = Data(
  Type.Object({
    success: Type.Boolean(),
    message: Type.String(),
    flag: Type.Object({ messageId: Type.String(), ...Flag.properties }),
  }),
);

const ReasonCount = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String({ description: 'Absent when the reason was deleted since.' })),
  count: Type.Integer(),
});

const flaggedFields = {
  source: Type.Literal('flagged'),
  messageId: Type.String(),
  message: Message,
  flags: Type.Array(Flag, { description: 'The latest 25 flags, the last made first.' }),
  flagsCount: Type.Integer({ description: 'Every flag of the message.' }),
  reasons: Type.Array(ReasonCount, { description: 'Its flags counted by reason, the most given first.' }),
  firstFlaggedAt: UnixTime('When it was first flagged.'),
  lastFlaggedAt: UnixTime('When it was last flagged.'),
};

export const FlaggedMessage = Type.Object(
  {
    ...flaggedFields,
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('disapproved')]),
    reviewedAt: Type.Optional(UnixTime('The last review, when there was one.')),
  },
  { description: 'A flagged message with its flags: the message as the app sees it, held or not.' },
);

const ReviewedFlaggedMessage = Type.Object(
  {
    ...flaggedFields,
    status: Type.Union([Type.Literal('approved'), Type.Literal('disapproved')]),
    reviewedAt: UnixTime('When it was reviewed.'),
  },
  { description: 'A flagged message a moderator reviewed.' },
);

const ReviewedBlockedMessage = Type.Object(
  {
    source: Type.Literal('blocked'),
    messageId: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')], { description: '`pending`: marked reviewed without a decision.' }),
    message: Message,
    kind: Type.Union([Type.Literal('send'), Type.Literal('edit')], { description: 'A send held before anyone saw it, or an edit of a shown message.' }),
    rule: Type.Object({ id: Type.String(), name: Type.String(), revisionId: Type.String() }, { description: 'The rule that held it, as it was then.' }),
    condition: Type.Optional(Type.Unknown({ description: 'The condition of the rule that matched.' })),
    action: Type.Unknown({ description: 'What the rule did.' }),
    heldAt: UnixTime('When the engine held it.'),
    reviewedAt: UnixTime('When it was reviewed.'),
  },
  { description: 'A message the moderation engine held, which a moderator reviewed.' },
);

const FlagListMeta = Type.Object({ current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }) });

const pageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Items per page.' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' })),
};

export const ListFlaggedQuery = Type.Object({
  ...pageQuery,
  reasonId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only messages with a flag of this reason.' })),
  sender: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only messages this user sent.' })),
});

export const ListReviewedQuery = Type.Object({
  ...pageQuery,
  source: Type.Optional(Type.Union([Type.Literal('flagged'), Type.Literal('blocked')], { description: 'Only flagged messages, or only messages the engine held.' })),
});

export const ReviewFlaggedBody = Type.Object({
  status: Type.Union([Type.Literal('approved'), Type.Literal('disapproved')], { description: 'approved: the message stays shown; disapproved: it is hidden from all but its sender.' }),
});

export const MessageParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 40, description: 'Id of a message.' }) });

export const FlaggedListResponse = DataWithMeta(Type.Array(FlaggedMessage), FlagListMeta);
export const ReviewedFlaggedResponse = Data(ReviewedFlaggedMessage);
export const ReviewedListResponse = DataWithMeta(Type.Array(Type.Union([ReviewedFlaggedMessage, ReviewedBlockedMessage])), FlagListMeta);
