import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { Data, DataWithMeta, Id, PageQuery, PaginationMeta, SuccessMessage } from './common.schema.js';
import { User } from './users.schema.js';

/** The uids of an add-friend, remove-friend, block-users or unblock-users call. */
export const RelationUids = (description: string) =>
  Type.Array(Id('uid of a user.'), { minItems: 1, maxItems: LIMITS.relationUidsPerCall, description: `${description} At most ${LIMITS.relationUidsPerCall}.` });

/** The answer for one uid of those calls. */
export const RelationResult = Type.Object({
  success: Type.Boolean(),
  message: Type.Optional(Type.String()),
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});
export const RelationResults = Type.Record(Type.String(), RelationResult, { description: 'The result for each uid, keyed by uid.' });

/** A user as a relation of the listed user: with the conversation between the two. */
export const RelatedUser = Type.Composite([User, Type.Object({ conversationId: Type.String({ description: '<uidA>_user_<uidB>, the uids in byte order.' }) })], {
  description: 'A user, with blockedByMe and hasBlockedMe relative to the listed user.',
});

export const AddFriendsBody = Type.Object({ accepted: RelationUids('uids of the new friends.') });
export const RemoveFriendsBody = Type.Object({ friends: RelationUids('uids of the friends to remove.') });

export const ListFriendsQuery = Type.Object({
  searchKey: Type.Optional(Type.String({ maxLength: LIMITS.nameLength, description: 'Prefix of the uid or name.' })),
  ...PageQuery,
});

export const AddFriendsResponse = Data(Type.Object({ accepted: RelationResults }));
export const FriendListResponse = DataWithMeta(Type.Array(RelatedUser), PaginationMeta);
export const RemoveFriendsResponse = Data(SuccessMessage);
