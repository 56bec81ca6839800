import { Type } from '@sinclair/typebox';
import { MODERATION_LIMITS } from '../domain/moderation/rules.js';
import { DataWithMeta, Data, SuccessMessage, UnixTime } from './common.schema.js';
import { Message } from './messages.schema.js';

/** A message held by the rules engine or the moderation hook, with what held it (the vendor's example). */
const BlockedItem = Type.Object(
  {
    ruleId: Type.String({ description: 'The rule that held it (`moderation-hook` for the hook).' }),
    ruleName: Type.String(),
    revisionId: Type.String({ description: "The rule's revision when it held the message." }),
    condition: Type.Unknown({ description: 'The condition that matched, as the rule wrote it (for the hook: its reason).' }),
    message: Message,
    action: Type.Array(Type.String(), { description: 'What the rule does (`blockMessage`).' }),
    kind: Type.Union([Type.Literal('send'), Type.Literal('edit')], { description: 'A send held before anyone saw it, or an edit of a message already shown.' }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected')]),
    reviewed: Type.Boolean(),
    createdAt: UnixTime('When it was held.'),
    updatedAt: UnixTime('When it was last reviewed or held.'),
  },
  { description: 'A message held for review.' },
);

export const ListBlockedQuery = Type.Object({
  status: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('approved'), Type.Literal('rejected'), Type.Literal('all')], {
      default: 'pending',
      description: 'Which records: those awaiting review (the default), approved, rejected, or all.',
    }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Records per page.' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' })),
});

export const BlockedListResponse = DataWithMeta(Type.Array(BlockedItem), Type.Object({ current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }) }));

export const BlockedParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: MODERATION_LIMITS.idLength, description: 'The id of the held message.' }),
});

export const ReviewBlockedBody = Type.Object({
  status: Type.Optional(Type.Union([Type.Literal('approved'), Type.Literal('rejected')], { description: 'Approve (release it in its place) or reject (keep it hidden).' })),
  reviewed: Type.Optional(Type.Boolean({ description: 'Whether the review is done (true when a status is given without it).' })),
});

export const ReviewBlockedResponse = Data(SuccessMessage);
