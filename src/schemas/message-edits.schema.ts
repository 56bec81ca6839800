import { Type } from '@sinclair/typebox';
import { Tags } from './common.schema.js';
import { MessageData } from './messages.schema.js';

export const UpdateMessageBody = Type.Object({
  data: Type.Optional(
    Type.Composite([MessageData], {
      additionalProperties: true,
      description: 'The keys to change: each replaces the stored one, the others stay. The result follows the rules of a send.',
    }),
  ),
  tags: Type.Optional(Tags('Replaces the tags of the message.')),
});

export const DeleteMessageBody = Type.Object({
  permanent: Type.Optional(Type.Boolean({ description: 'Removes the message (and the action messages carrying its content) instead of marking it deleted.' })),
});
