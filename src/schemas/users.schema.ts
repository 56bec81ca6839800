import { Type, type Static } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { Data, DataWithMeta, Id, JsonObject, ListQuery, PageQuery, PaginationMeta, SuccessMessage, Tags, UnixTime, Url } from './common.schema.js';

export const User = Type.Object(
  {
    uid: Type.String(),
    name: Type.String(),
    avatar: Type.Optional(Type.String()),
    link: Type.Optional(Type.String()),
    role: Type.String(),
    status: Type.String({ description: 'available or offline.' }),
    statusMessage: Type.Optional(Type.String()),
    metadata: Type.Optional(JsonObject('Metadata, without its @private part.')),
    tags: Type.Optional(Type.Array(Type.String())),
    createdAt: UnixTime('Unix seconds.'),
    updatedAt: Type.Optional(UnixTime('Unix seconds.')),
    lastActiveAt: Type.Optional(UnixTime('Unix seconds.')),
    deactivatedAt: Type.Optional(UnixTime('Unix seconds; present on deactivated users.')),
    authToken: Type.Optional(Type.String({ description: 'Present when created withAuthToken.' })),
    blockedByMe: Type.Optional(Type.Boolean({ description: 'With onBehalfOf (on friends and blocked lists: the listed user): whether that user blocked this one.' })),
    hasBlockedMe: Type.Optional(Type.Boolean({ description: 'As blockedByMe: whether this user blocked that user.' })),
    blockedByMeAt: Type.Optional(UnixTime('When blockedByMe: when that user blocked this one.')),
    hasBlockedMeAt: Type.Optional(UnixTime('When hasBlockedMe: when this user blocked that user.')),
    blockedAt: Type.Optional(UnixTime('blockedByMeAt, else hasBlockedMeAt.')),
  },
  { description: 'A user, as the vendor returns it.' },
);

const userFields = {
  name: Type.String({ minLength: 1, maxLength: LIMITS.nameLength, description: 'Display name of the user.' }),
  avatar: Url('URL to profile picture of the user.'),
  link: Url('URL to profile page.'),
  role: Id('User role of the user for role based access control.'),
  statusMessage: Type.String({ maxLength: LIMITS.statusMessageLength, description: "The user's current status or mood." }),
  metadata: JsonObject('Additional information about the user as JSON; an @private key is stored but never returned.'),
  tags: Tags('A list of tags to identify specific users.'),
};

export const CreateUserBody = Type.Object({
  uid: Id('Unique identifier of the user; stored lower-cased.'),
  name: userFields.name,
  avatar: Type.Optional(userFields.avatar),
  link: Type.Optional(userFields.link),
  role: Type.Optional(userFields.role),
  statusMessage: Type.Optional(userFields.statusMessage),
  metadata: Type.Optional(userFields.metadata),
  tags: Type.Optional(userFields.tags),
  withAuthToken: Type.Optional(Type.Boolean({ description: 'Includes an authToken of the created user in the response.' })),
});
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UnsettableUserField = Type.Union([Type.Literal('avatar'), Type.Literal('link'), Type.Literal('metadata'), Type.Literal('statusMessage'), Type.Literal('tags')]);

export const UpdateUserBody = Type.Object({
  name: Type.Optional(userFields.name),
  avatar: Type.Optional(userFields.avatar),
  link: Type.Optional(userFields.link),
  role: Type.Optional(userFields.role),
  statusMessage: Type.Optional(userFields.statusMessage),
  metadata: Type.Optional(userFields.metadata),
  tags: Type.Optional(userFields.tags),
  unset: Type.Optional(Type.Array(UnsettableUserField, { maxItems: 5, description: 'User attributes to remove: avatar, link, metadata, statusMessage, tags.' })),
});
export type UpdateUserBody = Static<typeof UpdateUserBody>;

export const ListUsersQuery = Type.Object({
  searchKey: Type.Optional(Type.String({ maxLength: LIMITS.nameLength, description: 'Prefix of the uid or name.' })),
  searchIn: Type.Optional(ListQuery(Type.Union([Type.Literal('name'), Type.Literal('uid')]), 'Search in name, uid or both.')),
  status: Type.Optional(Type.Union([Type.Literal('available'), Type.Literal('offline')], { description: 'User status filter.' })),
  count: Type.Optional(Type.Boolean({ description: 'Include the total count (always included in meta.pagination).' })),
  ...PageQuery,
  role: Type.Optional(Type.String({ maxLength: 100, description: 'Only users with this role.' })),
  roles: Type.Optional(ListQuery(Type.String({ maxLength: 100 }), 'Only users with one of these roles.')),
  withTags: Type.Optional(Type.Boolean({ description: 'Includes tags in the response.' })),
  tags: Type.Optional(ListQuery(Type.String({ maxLength: 100 }), 'Only users having at least one of these tags.')),
  onlyDeactivated: Type.Optional(Type.Boolean({ description: 'Only deactivated users.' })),
  withDeactivated: Type.Optional(Type.Boolean({ description: 'Include deactivated users.' })),
});
export type ListUsersQuery = Static<typeof ListUsersQuery>;

export const UidParams = Type.Object({ uid: Type.String({ minLength: 1, maxLength: 200, description: 'UID of a user.' }) });

export const DeleteUserBody = Type.Object({
  permanent: Type.Optional(Type.Boolean({ description: 'Deletes the user permanently instead of deactivating them.' })),
});

export const DeactivateUsersBody = Type.Object({
  uidsToDeactivate: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: LIMITS.bulkUids }),
});
export const ReactivateUsersBody = Type.Object({
  uidsToActivate: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: LIMITS.bulkUids }),
});

/** On lists of users read with onBehalfOf: that user's 1:1 conversation with each listed one. */
export const ViewerConversation = {
  conversationId: Type.Optional(Type.String({ description: 'With onBehalfOf: the 1:1 conversation between that user and this one, <uidA>_user_<uidB>.' })),
};

export const UserResponse = Data(User);
export const UserListResponse = DataWithMeta(Type.Array(Type.Composite([User, Type.Object(ViewerConversation)])), PaginationMeta);
export const DeleteUserResponse = Data(SuccessMessage);
export const DeactivateUsersResponse = Data(Type.Object({ deactivatedUids: Type.Array(Type.String()) }));
export const ReactivateUsersResponse = Data(Type.Object({ nonDeactivatedUids: Type.Array(Type.String()) }));
