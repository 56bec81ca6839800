import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { DataWithMeta, JsonObject, UnixTime } from './common.schema.js';

export const ReactionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 40, description: 'Id of a message.' }),
  reaction: Type.String({
    minLength: 1,
    maxLength: LIMITS.reactionLength,
    description: `A reaction: an emoji or any text of 1–${LIMITS.reactionLength} characters, URL-encoded.`,
  }),
});

export const ReactionListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.reactionsPageMax, description: `Reactions per page, 1–${LIMITS.reactionsPageMax}; default ${LIMITS.reactionsPageMax}.` })),
    id: Type.Optional(Type.String({ pattern: '^[0-9]{1,30}$', description: 'Cursor: the reactions added after this one (meta.next.id).' })),
  },
  { additionalProperties: false },
);

export const Reaction = Type.Object({
  id: Type.String({ description: 'Id of the reaction; ids increase in the order reactions are added.' }),
  messageId: Type.String(),
  reaction: Type.String(),
  uid: Type.String({ description: 'The user who reacted.' }),
  reactedAt: UnixTime('Unix seconds.'),
  reactedBy: JsonObject('The user who reacted, as now.'),
});

export const ReactionListMeta = Type.Object({
  current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }),
  next: Type.Optional(Type.Object({ affix: Type.Literal('append'), id: Type.String() }, { description: 'The last reaction of the page.' })),
});

export const ReactionListResponse = DataWithMeta(Type.Array(Reaction), ReactionListMeta);
