import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { DataWithMeta, UnixTime } from './common.schema.js';
import { Message, SendMessageBody } from './messages.schema.js';

/** The vendor's body of send-thread-message: that of send-message; receiver and receiverType optional. */
export const SendThreadMessageBody = SendMessageBody;

export const ThreadListQuery = Type.Object(
  {
    perPage: Type.Optional(Type.Integer({ minimum: 1, maximum: LIMITS.perPageMax, description: `Replies per page, 1–${LIMITS.perPageMax}; default ${LIMITS.perPageDefault}.` })),
    // Bounded so that the offset stays a small integer.
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'Page number, from 1.' })),
  },
  { additionalProperties: false },
);

export const ThreadListMeta = Type.Object({
  current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }),
  next: Type.Optional(Type.Object({ affix: Type.Literal('append'), id: Type.String(), sentAt: UnixTime('Unix seconds.') }, { description: 'The last reply of the page.' })),
});

export const ThreadListResponse = DataWithMeta(Type.Array(Message), ThreadListMeta);
