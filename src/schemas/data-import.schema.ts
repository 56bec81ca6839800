import { Type, type TSchema } from '@sinclair/typebox';
import { LIMITS, UNIX_SECONDS_MAX } from '../domain/normalize.js';
import { Data, UnixTime } from './common.schema.js';
import { CreateGroupBody, Group, ScopeSchema } from './groups.schema.js';
import { Message, SendMessageBody } from './messages.schema.js';
import { CreateUserBody, User } from './users.schema.js';

/**
 * The data import API (docs/compatibility.md, "Data import"). Each record is validated on its own against these schemas,
 * which reuse the field schemas of create-user and create-group, so the import path applies the
 * REST path's rules and limits. The route bodies only document the wrapper: a bad record fails
 * that record, not the call.
 */

/** 10-digit unix seconds, as an integer or a string of digits (the vendor's examples send strings). */
export const ImportTime = (description: string) =>
  Type.Union([Type.Integer({ minimum: 0, maximum: UNIX_SECONDS_MAX }), Type.String({ pattern: '^[0-9]{1,10}$' })], {
    description: `${description} Unix seconds, as an integer or a string of digits.`,
  });

const { withAuthToken: _withAuthToken, ...userFields } = CreateUserBody.properties;
const { members: _members, ...groupFields } = CreateGroupBody.properties;

export const ImportUserRecord = Type.Object(
  {
    ...userFields,
    createdAt: Type.Optional(ImportTime('When the user was created; now when absent.')),
    lastActiveAt: Type.Optional(ImportTime('When the user was last online.')),
    deactivatedAt: Type.Optional(ImportTime('When the user was deactivated; the user is imported deactivated.')),
  },
  { description: 'A user, as for create-user, with its source timestamps.' },
);

export const ImportGroupDetails = Type.Object(
  {
    ...groupFields,
    createdAt: Type.Optional(ImportTime('When the group was created; now when absent.')),
  },
  { description: 'A group, as for create-group, with its source creation time.' },
);

export const ImportGroupRecord = Type.Object(
  {
    ...ImportGroupDetails.properties,
    groupOwnerDetails: Type.Optional(Type.Object(ImportUserRecord.properties, { description: 'The owner, created first when missing.' })),
  },
  { description: 'A group, as for create-group, with its source creation time.' },
);

export const ImportMemberRecord = Type.Object(
  {
    memberId: Type.String({ minLength: 1, description: '<guid>_member_<uid>, the key of the record.' }),
    guid: Type.String({ description: 'GUID of the group.' }),
    uid: Type.String({ description: 'UID of the user.' }),
    scope: Type.Optional(Type.Union([ScopeSchema], { description: 'The member’s scope; participant when absent.' })),
    isBanned: Type.Optional(Type.Boolean({ description: 'true: the user is banned from the group instead of being a member.' })),
    joinedAt: Type.Optional(ImportTime('When the user joined (or was banned); not before the group’s createdAt, not in the future.')),
    groupDetails: Type.Optional(Type.Object(ImportGroupDetails.properties, { description: 'The group, created first when missing.' })),
    userDetails: Type.Optional(Type.Object(ImportUserRecord.properties, { description: 'The user, created first when missing.' })),
  },
  { description: 'A membership (or a ban) of a user in a group.' },
);

const { receiver: _receiver, receiverType: _receiverType, muid: _muid, multipleReceivers: _multiple, ...messageFields } = SendMessageBody.properties;

export const ImportMessageRecord = Type.Object(
  {
    muid: Type.String({ minLength: 1, maxLength: LIMITS.muidLength, description: 'The source id of the message, the key of the record.' }),
    sender: Type.String({ minLength: 1, maxLength: 200, description: 'UID of the sender.' }),
    receiverType: Type.Union([Type.Literal('user'), Type.Literal('group')], { description: 'user or group.' }),
    receiver: Type.String({ minLength: 1, maxLength: 200, description: 'UID of the receiving user, or GUID of the group.' }),
    ...messageFields,
    sentAt: ImportTime('When the message was sent: its place in the history.'),
    deliveredAt: Type.Optional(ImportTime('When the receiver received it; not before sentAt.')),
    readAt: Type.Optional(ImportTime('When the receiver read it (it is then delivered too); not before sentAt.')),
    senderUserDetails: Type.Optional(Type.Object(ImportUserRecord.properties, { description: 'The sender, created first when missing.' })),
    receiverUserDetails: Type.Optional(Type.Object(ImportUserRecord.properties, { description: 'The receiving user, created first when missing.' })),
    receiverGroupDetails: Type.Optional(Type.Object(ImportGroupDetails.properties, { description: 'The receiving group, created first when missing.' })),
    receiverGroupOwnerDetails: Type.Optional(Type.Object(ImportUserRecord.properties, { description: 'The owner of receiverGroupDetails, created first when missing.' })),
    mentionedUserDetails: Type.Optional(
      Type.Record(Type.String(), Type.Object(ImportUserRecord.properties), {
        maxProperties: 100,
        description: 'Users mentioned as <@uid:UID> in data.text, keyed by uid, created first when missing.',
      }),
    ),
  },
  { description: 'A message, as for send-message, with its sender, receiver and source timestamps.' },
);

/** The route bodies: the wrapper, an object keyed by record id. Records are checked one by one. */
const Wrapper = <T extends TSchema>(record: T, key: string) => Type.Record(Type.String(), record, { description: `The records, keyed by ${key}; each key must equal the record's ${key}.` });

export const ImportUsersBody = Type.Object({ users: Wrapper(ImportUserRecord, 'uid') });
export const ImportGroupsBody = Type.Object({ groups: Wrapper(ImportGroupRecord, 'guid') });
export const ImportMembersBody = Type.Object({ members: Wrapper(ImportMemberRecord, 'memberId') });
export const ImportMessagesBody = Type.Object({ messages: Wrapper(ImportMessageRecord, 'muid') });

/** Parley extension (docs/webhooks.md): imported messages record no events unless asked. */
export const ImportMessagesQuery = Type.Object({
  recordEvents: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'Parley extension: record message_sent (and user_mentioned) for the imported messages, so webhooks and the event stream get them. Off by default: a migration fires no webhooks.',
    }),
  ),
  moderate: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        "Parley extension: moderate each message with the app's moderation rules (not its hook); a message a rule drops or blocks is refused with ERR_BLOCKED_BY_EXTENSION. Off by default: history is imported as it was.",
    }),
  ),
});

const RecordError = Type.Object({ code: Type.String(), message: Type.String(), details: Type.Optional(Type.Record(Type.String(), Type.String())) });

/** One record's result: the stored entity, or why it was refused. */
const RecordResult = <T extends TSchema>(entity: T) => Type.Object({ success: Type.Boolean(), data: Type.Optional(entity), error: Type.Optional(RecordError) });

export const ImportedMember = Type.Object({
  guid: Type.String(),
  uid: Type.String(),
  scope: Type.Optional(ScopeSchema),
  joinedAt: Type.Optional(UnixTime('When the user joined.')),
  isBanned: Type.Optional(Type.Boolean({ description: 'true for an imported ban.' })),
  bannedAt: Type.Optional(UnixTime('When the user was banned.')),
});

const Results = <T extends TSchema>(entity: T, key: string) => Data(Type.Record(Type.String(), RecordResult(entity), { description: `The result of each record, keyed as sent (by ${key}).` }));

export const ImportUsersResponse = Results(User, 'uid');
export const ImportGroupsResponse = Results(Group, 'guid');
export const ImportMembersResponse = Results(ImportedMember, 'memberId');
export const ImportMessagesResponse = Results(Message, 'muid');
