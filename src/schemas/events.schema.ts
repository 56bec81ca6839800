import { Type } from '@sinclair/typebox';
import { EVENT_ID_PATTERN } from '../domain/events.js';

export const EventStreamQuery = Type.Object({
  triggers: Type.Optional(
    Type.String({
      maxLength: 2000,
      description: 'Only these triggers, comma-separated (e.g. `message_sent,group_member_added`); all when absent.',
    }),
  ),
});

export const EventStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(Type.String({ pattern: EVENT_ID_PATTERN, description: 'Resume after this event id (the `id` of the last event received), from the log.' })),
});
