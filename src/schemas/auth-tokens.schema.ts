import { Type } from '@sinclair/typebox';
import { Data, DataWithMeta, JsonObject, PageQuery, PaginationMeta, SuccessMessage, UnixTime } from './common.schema.js';

export const AuthToken = Type.Object(
  {
    uid: Type.String(),
    authToken: Type.String({ description: 'The token in plain text when just created; masked everywhere else.' }),
    createdAt: UnixTime('Unix seconds.'),
    updatedAt: Type.Optional(UnixTime('Unix seconds.')),
    platform: Type.Optional(Type.String()),
    userAgent: Type.Optional(Type.String()),
    appInfo: Type.Optional(JsonObject('Application information.')),
  },
  { description: 'An auth token of a user.' },
);

export const CreateAuthTokenBody = Type.Object({
  force: Type.Optional(Type.Boolean({ description: 'Accepted for compatibility: every call issues a new token.' })),
});
export const UpdateAuthTokenBody = Type.Object({
  platform: Type.Optional(Type.String({ maxLength: 100, description: 'The platform on which the auth token is used.' })),
  userAgent: Type.Optional(Type.String({ maxLength: 1000, description: 'userAgent from which the auth token is used.' })),
  appInfo: Type.Optional(JsonObject('JSON data containing app information.')),
});
export const AuthTokenParams = Type.Object({
  uid: Type.String({ minLength: 1, maxLength: 200, description: 'UID of a user.' }),
  authToken: Type.String({ minLength: 1, maxLength: 400, description: 'The token, or its masked form as listings show it.' }),
});
export const ListAuthTokensQuery = Type.Object({ ...PageQuery });

export const AuthTokenResponse = Data(AuthToken);
export const AuthTokenListResponse = DataWithMeta(Type.Array(AuthToken), PaginationMeta);
export const AuthTokenDeleteResponse = Data(SuccessMessage);
