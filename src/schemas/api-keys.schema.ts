import { Type } from '@sinclair/typebox';
import { LIMITS } from '../domain/normalize.js';
import { Data, DataWithMeta, PaginationMeta, SuccessMessage, UnixTime } from './common.schema.js';

const Scope = Type.Union([Type.Literal('authOnly'), Type.Literal('fullAccess')], {
  description: 'fullAccess: every operation. authOnly: creating users and auth tokens only.',
});

export const ApiKey = Type.Object(
  {
    apiKey: Type.String({ description: 'The key in plain text when just created; masked everywhere else.' }),
    name: Type.String(),
    scope: Scope,
    createdAt: UnixTime('Unix seconds.'),
    updatedAt: Type.Optional(UnixTime('Unix seconds.')),
  },
  { description: 'An API key.' },
);

const Name = Type.String({ minLength: 1, maxLength: LIMITS.apiKeyNameLength, description: 'Friendly name for the API key.' });

export const CreateApiKeyBody = Type.Object({ name: Name, scope: Scope });
export const UpdateApiKeyBody = Type.Object({ name: Type.Optional(Name), scope: Type.Optional(Scope) });
export const ListApiKeysQuery = Type.Object({
  scope: Type.Optional(Scope),
  searchKey: Type.Optional(Type.String({ maxLength: 100, description: 'Part of the name, any case.' })),
});
export const ApiKeyParams = Type.Object({
  apiKey: Type.String({ minLength: 1, maxLength: 200, description: 'The key, or its masked form as listings show it.' }),
});

export const ApiKeyResponse = Data(ApiKey);
export const ApiKeyListResponse = DataWithMeta(Type.Array(ApiKey), PaginationMeta);
export const ApiKeyDeleteResponse = Data(SuccessMessage);
