import { Type } from '@sinclair/typebox';
import { PUSH_PLATFORMS, PUSH_TOKEN_LIMITS, PUSH_TOKEN_PATTERN } from '../domain/notifications/push-tokens.js';
import { Data } from './common.schema.js';

// Push tokens (docs/notifications.md, "Push tokens"). The schema checks types, lengths and the
// platform; the service checks that the token comes in the platform's field, and the time zone.

const Platform = Type.Unsafe<(typeof PUSH_PLATFORMS)[number]>({
  type: 'string',
  enum: [...PUSH_PLATFORMS],
  description: 'The platform the token was issued for: fcm_* tokens go through FCM, apns_* through APNs (apns_*_voip: VoIP pushes for calls).',
});

const AuthToken = Type.String({
  minLength: 1,
  maxLength: 400,
  description: 'An auth token of the user (create-authtoken), in plain text: the tokens are registered for its user.',
});

const Token = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: PUSH_TOKEN_LIMITS.tokenLength,
    pattern: PUSH_TOKEN_PATTERN,
    description: `${description} Printable ASCII, at most ${PUSH_TOKEN_LIMITS.tokenLength} characters.`,
  });

export const RegisterPushTokenBody = Type.Object({
  authToken: AuthToken,
  platform: Platform,
  providerId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: PUSH_TOKEN_LIMITS.providerIdLength,
      description: "The FCM or APNs provider to send the token's notifications through; the app's default provider of its kind (when sending) unless given.",
    }),
  ),
  fcmToken: Type.Optional(Token('The FCM registration token, for the fcm_* platforms.')),
  deviceToken: Type.Optional(Token('The APNs device token, for the apns_*_device platforms.')),
  voipToken: Type.Optional(Token('The APNs VoIP (PushKit) token, for the apns_*_voip platforms.')),
  timezone: Type.Optional(Type.String({ minLength: 1, maxLength: PUSH_TOKEN_LIMITS.timezoneLength, description: 'The IANA time zone of the device, e.g. Asia/Kolkata; kept with the token.' })),
});

export const ListPushTokensQuery = Type.Object({
  authToken: AuthToken,
  all: Type.Optional(Type.Boolean({ description: "true: every token of the auth token's user; false (default): the tokens registered with this auth token." })),
});

export const UnregisterPushTokensQuery = Type.Object({
  all: Type.Optional(Type.Boolean({ description: "true: deletes every token of the auth token's user; false (default): the tokens registered with this auth token." })),
});

export const UnregisterPushTokenBody = Type.Object({ authToken: AuthToken });

export const PushTokenParams = Type.Object({
  pushToken: Token('The push token (FCM, APNs device or VoIP token) to delete.'),
});

export const PushToken = Type.Object(
  {
    authToken: Type.String({ description: 'The auth token it was registered with: as the request sent it when it is that one, masked otherwise.' }),
    pushTokenType: Type.Union([Type.Literal('chat'), Type.Literal('voip')], { description: 'voip for the apns_*_voip platforms, chat otherwise.' }),
    createdAt: Type.String({ description: 'ISO 8601: when it was registered for this user.' }),
    platform: Type.String(),
    providerId: Type.Optional(Type.String({ description: "Absent: the app's default provider of its kind." })),
    pushToken: Type.String(),
    uid: Type.String(),
    updatedAt: Type.String({ description: 'ISO 8601: when it was last registered.' }),
    timezone: Type.Optional(Type.String()),
  },
  { description: 'A push token of a user.' },
);

export const RegisterPushTokenResponse = Data(Type.Object({ success: Type.Literal(true) }));
export const PushTokenListResponse = Data(Type.Object({ pushTokens: Type.Array(PushToken) }));
