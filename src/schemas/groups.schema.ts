import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { Data, DataWithMeta, Id, JsonObject, ListQuery, PageQuery, PaginationMeta, SuccessMessage, Tags, UnixTime, UnixTimeInput, Url } from './common.schema.js';
import { Message } from './messages.schema.js';
import { User, ViewerConversation } from './users.schema.js';

const GroupTypeSchema = Type.Union([Type.Literal('public'), Type.Literal('private'), Type.Literal('password')], {
  description: 'public: anyone may join; password: joining needs the password; private: members must be added.',
});
export const ScopeSchema = Type.Union([Type.Literal('admin'), Type.Literal('moderator'), Type.Literal('participant')]);

const UidList = (description: string) => Type.Array(Type.String({ pattern: '^[a-zA-Z0-9_-]+$', minLength: 1, maxLength: 100 }), { maxItems: LIMITS.membersPerCall, description });

export const MembersInputSchema = Type.Object(
  {
    admins: Type.Optional(UidList('uids to add as admins.')),
    moderators: Type.Optional(UidList('uids to add as moderators.')),
    participants: Type.Optional(UidList('uids to add as participants.')),
    usersToBan: Type.Optional(UidList('uids to ban.')),
  },
  { description: `At most ${LIMITS.membersPerCall} uids across the four arrays.` },
);

const UidResult = Type.Object({
  success: Type.Boolean(),
  data: Type.Optional(Message),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});
const BucketResult = Type.Record(Type.String(), UidResult);
export const MembersResultSchema = Type.Object(
  {
    admins: Type.Optional(BucketResult),
    moderators: Type.Optional(BucketResult),
    participants: Type.Optional(BucketResult),
    usersToBan: Type.Optional(BucketResult),
  },
  { description: 'The result for each uid, under the array it was placed in.' },
);

export const Group = Type.Object(
  {
    guid: Type.String(),
    name: Type.String(),
    type: GroupTypeSchema,
    icon: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    metadata: Type.Optional(JsonObject('Metadata as set.')),
    tags: Type.Optional(Type.Array(Type.String())),
    owner: Type.Optional(Type.String()),
    membersCount: Type.Integer(),
    conversationId: Type.String({ description: 'group_<guid>' }),
    createdAt: UnixTime('Unix seconds.'),
    updatedAt: Type.Optional(UnixTime('Unix seconds.')),
    hasJoined: Type.Optional(Type.Boolean({ description: 'With onBehalfOf: whether that user is a member.' })),
    scope: Type.Optional(ScopeSchema),
    joinedAt: Type.Optional(UnixTime('With onBehalfOf: when that user joined.')),
    members: Type.Optional(MembersResultSchema),
  },
  { description: 'A group, as the vendor returns it.' },
);

const groupFields = {
  name: Type.String({ minLength: 1, maxLength: LIMITS.nameLength, description: 'Name of the group.' }),
  password: Type.String({ minLength: 1, maxLength: LIMITS.groupPasswordLength, description: 'Password of a password group; never returned.' }),
  icon: Url('URL of the group icon.'),
  description: Type.String({ maxLength: LIMITS.groupDescriptionLength, description: 'Description of the group.' }),
  metadata: JsonObject('Additional information about the group as JSON.'),
  owner: Id('uid of the owner, who becomes an admin member.'),
  tags: Tags('A list of tags to identify groups.'),
};

export const CreateGroupBody = Type.Object({
  guid: Id('Unique identifier of the group; stored lower-cased.'),
  name: groupFields.name,
  type: GroupTypeSchema,
  password: Type.Optional(groupFields.password),
  icon: Type.Optional(groupFields.icon),
  description: Type.Optional(groupFields.description),
  metadata: Type.Optional(groupFields.metadata),
  owner: Type.Optional(groupFields.owner),
  tags: Type.Optional(groupFields.tags),
  members: Type.Optional(MembersInputSchema),
});

export const UpdateGroupBody = Type.Object({
  name: Type.Optional(groupFields.name),
  type: Type.Optional(GroupTypeSchema),
  password: Type.Optional(groupFields.password),
  icon: Type.Optional(groupFields.icon),
  description: Type.Optional(groupFields.description),
  metadata: Type.Optional(groupFields.metadata),
  owner: Type.Optional(groupFields.owner),
  tags: Type.Optional(groupFields.tags),
  unset: Type.Optional(
    Type.Array(Type.Union([Type.Literal('icon'), Type.Literal('description'), Type.Literal('metadata'), Type.Literal('tags')]), {
      maxItems: 4,
      description: 'Fields to remove: icon, description, metadata, tags.',
    }),
  ),
});

export const ListGroupsQuery = Type.Object({
  searchKey: Type.Optional(Type.String({ maxLength: LIMITS.nameLength, description: 'Prefix of the name or guid.' })),
  searchIn: Type.Optional(ListQuery(Type.Union([Type.Literal('name'), Type.Literal('guid')]), 'Search in name, guid or both.')),
  sortBy: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('guid'), Type.Literal('createdAt')], { default: 'name' })),
  sortOrder: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc' })),
  ...PageQuery,
  affix: Type.Optional(Type.Union([Type.Literal('append'), Type.Literal('prepend')], { description: 'With updatedAt: groups changed after (append) or before (prepend) it.' })),
  updatedAt: Type.Optional(UnixTimeInput('Unix seconds; with affix.')),
  withTags: Type.Optional(Type.Boolean({ description: 'Includes tags in the response.' })),
  tags: Type.Optional(ListQuery(Type.String({ maxLength: 100 }), 'Only groups having at least one of these tags.')),
  type: Type.Optional(GroupTypeSchema),
  types: Type.Optional(ListQuery(GroupTypeSchema, 'Only groups of these types.')),
  hasJoined: Type.Optional(Type.Boolean({ description: 'With onBehalfOf: only the groups that user has joined.' })),
});

export const GuidParams = Type.Object({ guid: Type.String({ minLength: 1, maxLength: 200, description: 'GUID of a group.' }) });
export const GuidUidParams = Type.Object({
  guid: Type.String({ minLength: 1, maxLength: 200, description: 'GUID of a group.' }),
  uid: Type.String({ minLength: 1, maxLength: 200, description: 'UID of a user.' }),
});

export const AddMembersBody = Type.Object({
  ...MembersInputSchema.properties,
  password: Type.Optional(Type.String({ maxLength: LIMITS.groupPasswordLength, description: 'To join a password group: the onBehalfOf user adding only themselves.' })),
});

export const ListMembersQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(Type.Union([Type.Literal('available'), Type.Literal('offline')], { description: 'Member status filter.' })),
  scopes: Type.Optional(ListQuery(ScopeSchema, 'Only members with these scopes.')),
});

export const ChangeScopeBody = Type.Object({ scope: Type.Optional(Type.Union([ScopeSchema], { default: 'participant' })) });

export const Member = Type.Composite([User, Type.Object({ scope: ScopeSchema, joinedAt: UnixTime('When the user joined.'), ...ViewerConversation })], {
  description: 'A member: the user and their scope.',
});
export const BannedUser = Type.Composite([User, Type.Object({ bannedAt: UnixTime('When the user was banned.'), ...ViewerConversation })]);

export const GroupResponse = Data(Group);
export const GroupListResponse = DataWithMeta(Type.Array(Group), PaginationMeta);
export const GroupDeleteResponse = Data(SuccessMessage);
export const AddMembersResponse = Data(MembersResultSchema);
export const MemberListResponse = DataWithMeta(Type.Array(Member), PaginationMeta);
export const ChangeScopeResponse = Data(Type.Object({ guid: Type.String(), uid: Type.String(), scope: ScopeSchema, joinedAt: UnixTime('When the user joined.') }));
export const BannedListResponse = DataWithMeta(Type.Array(BannedUser), PaginationMeta);
export const SuccessResponse = Data(SuccessMessage);
