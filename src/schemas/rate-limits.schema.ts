import { Type } from '@sinclair/typebox';
import { Data } from './common.schema.js';

const Standing = (description: string) =>
  Type.Optional(
    Type.Object(
      {
        limit: Type.Integer({ description: 'Requests allowed in a minute.' }),
        remaining: Type.Integer({ description: 'Requests left in the current minute.' }),
        reset: Type.Integer({ description: 'When the current minute ends and the count starts again, in unix seconds.' }),
      },
      { description },
    ),
  );

/** Each class that is on; a class set to 0 (off) is left out. */
export const RateLimitsResponse = Data(
  Type.Object({
    core: Standing('Create and delete user, create group, add members (join), remove a member (leave), create auth token.'),
    standard: Standing('Every other operation of the general API.'),
    import: Standing('The data import API.'),
    send_per_user: Standing('Sends by the onBehalfOf user (only with an onBehalfOf header).'),
    unread_per_user: Standing('Mark-as-unread by the onBehalfOf user (only with an onBehalfOf header).'),
  }),
);
