import { Type } from '@sinclair/typebox';
import { Data, JsonObject } from './common.schema.js';
import { User } from './users.schema.js';

/** Where a client finds Parley (ClientSessionsService.settings). */
export const ClientSettings = Type.Object(
  {
    appId: Type.String(),
    region: Type.String(),
    parley: Type.Object({ version: Type.String() }),
    hosts: Type.Object({
      api: Type.String({ description: 'The host the request was sent to: the REST API.' }),
      websocket: Type.String({ description: 'The host of the real-time gateway.' }),
    }),
    apiPath: Type.String({ description: 'The REST base path (`/v3.0` serves the same).' }),
    websocket: Type.Object({ path: Type.String(), subprotocol: Type.String() }, { description: 'The gateway (docs/realtime.md).' }),
    events: Type.Object({ path: Type.String() }, { description: 'The same frames as server-sent events.' }),
  },
  { description: "Parley's hosts, version and real-time endpoints, for a client SDK." },
);

export const UpdateMeBody = Type.Object({
  platform: Type.Optional(Type.String({ maxLength: 100, description: 'The platform of the device (stored on the auth token).' })),
  deviceId: Type.Optional(Type.String({ maxLength: 400, description: 'The device (accepted, not stored).' })),
  appInfo: Type.Optional(JsonObject('The app on the device (stored on the auth token).')),
});

export const LoginResponse = Data(Type.Composite([User, Type.Object({ settings: ClientSettings })], { description: 'The user, with the settings.' }));
export const ClientSettingsResponse = Data(ClientSettings);
export const UserSessionBody = Type.Object({}, { additionalProperties: true, maxProperties: 50, description: 'What the SDK reports of its session (not stored).' });
export const UserSessionResponse = Data(Type.Object({ uid: Type.String(), success: Type.Boolean() }));
