import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { Data, DataWithMeta, PageQuery, PaginationMeta } from './common.schema.js';
import { RelatedUser, RelationResults, RelationUids } from './friends.schema.js';

export const BlockUsersBody = Type.Object({ blockedUids: RelationUids('uids of the users to block.') });
export const UnblockUsersBody = Type.Object({ blockedUids: RelationUids('uids of the users to unblock.') });

export const ListBlockedUsersQuery = Type.Object({
  direction: Type.Optional(
    Type.Union([Type.Literal('blockedByMe'), Type.Literal('hasBlockedMe'), Type.Literal('both')], {
      default: 'blockedByMe',
      description: 'The users this user blocked (blockedByMe), who blocked this user (hasBlockedMe), or both.',
    }),
  ),
  searchKey: Type.Optional(Type.String({ maxLength: LIMITS.nameLength, description: 'Prefix of the uid or name.' })),
  ...PageQuery,
});

export const BlockResultsResponse = Data(RelationResults);
export const BlockedUserListResponse = DataWithMeta(Type.Array(RelatedUser), PaginationMeta);
