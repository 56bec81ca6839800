import { Type, type TSchema } from '@sinclair/typebox';
import { PROVIDER_ID_MAX_LENGTH, PROVIDER_ID_PATTERN, PUSH_PROVIDER_LIMITS } from '../domain/notifications/push-providers.js';
import { Data, UnixTime } from './common.schema.js';

// FCM and APNs providers (docs/notifications.md). The schema checks types and lengths; the
// service checks the keys (loaded with node:crypto), the Apple ids and the bundle id, and names
// the rule broken.

export const ProviderId = Type.String({
  pattern: PROVIDER_ID_PATTERN,
  minLength: 1,
  maxLength: PROVIDER_ID_MAX_LENGTH,
  description: 'The provider’s id, chosen when it is added: letters, digits, - and _, kept as sent (case counts). A push token registered with it is sent through it.',
});

export const ProviderParams = Type.Object({ providerId: ProviderId });

const Filename = (description: string) => Type.Optional(Type.String({ maxLength: PUSH_PROVIDER_LIMITS.filenameLength, description }));

const SilentNotification = Type.Object({
  chat: Type.Optional(Type.Boolean({ description: 'Messages (and other chat notifications).' })),
  call: Type.Optional(Type.Boolean({ description: 'Calls.' })),
});

const NotificationInPayloadInput = Type.Object(
  { ios: Type.Optional(SilentNotification), android: Type.Optional(SilentNotification), web: Type.Optional(SilentNotification) },
  { description: 'Whether the FCM message carries FCM’s `notification` key (shown by the platform itself), per platform and type; false (data only) unless given.' },
);

const account = (maxLength: number) => ({ type: 'string', maxLength });
const ServiceAccountCreds = Type.Unsafe<Record<string, unknown> | string>({
  type: ['object', 'string'],
  maxLength: PUSH_PROVIDER_LIMITS.serviceAccountChars,
  properties: {
    type: account(PUSH_PROVIDER_LIMITS.fieldLength),
    project_id: account(PUSH_PROVIDER_LIMITS.fieldLength),
    client_email: account(PUSH_PROVIDER_LIMITS.fieldLength),
    private_key: account(PUSH_PROVIDER_LIMITS.rsaPemChars),
    private_key_id: account(PUSH_PROVIDER_LIMITS.fieldLength),
  },
  description:
    'The Firebase service account’s key file: its JSON object, or the file’s text. `project_id`, `client_email` and `private_key` (its PEM RSA key) are ' +
    'required; `type`, when given, must be "service_account"; the other fields are kept. Sealed at rest; answers show it without `private_key`.',
});

const FcmFields = {
  serviceAccountFilename: Filename('The name of the uploaded file, kept to be shown.'),
  notificationInPayload: Type.Optional(NotificationInPayloadInput),
};

export const AddFcmProviderBody = Type.Object({ providerId: ProviderId, ...FcmFields, serviceAccountCreds: ServiceAccountCreds });
export const UpdateFcmProviderBody = Type.Object({
  providerId: ProviderId,
  ...FcmFields,
  serviceAccountCreds: Type.Optional(ServiceAccountCreds),
});

const AppleId = (what: string) => Type.String({ minLength: 1, maxLength: PUSH_PROVIDER_LIMITS.fieldLength, description: `The ${what}: 10 letters and digits, as Apple’s developer account shows it.` });

const ApnsFields = {
  p8KeyFilename: Filename('The name of the uploaded .p8 file, kept to be shown.'),
  includeContentAvailable: Type.Optional(Type.Boolean({ description: 'Sends `content-available: 1` (a background update); false unless given.' })),
  includeMutableContent: Type.Optional(Type.Boolean({ description: 'Sends `mutable-content: 1` (a notification service extension may change it); false unless given.' })),
  productionMode: Type.Optional(Type.Boolean({ description: 'Sends to APNs’ production servers; false (the sandbox, for development builds) unless given.' })),
};

const ApnsKeys = {
  keyId: AppleId('id of the APNs key (Key ID)'),
  teamId: AppleId('id of the Apple developer team (Team ID)'),
  bundleId: Type.String({ minLength: 1, maxLength: PUSH_PROVIDER_LIMITS.fieldLength, description: 'The app’s bundle id (the APNs topic), reverse-DNS: com.example.app.' }),
  p8Key: Type.String({
    minLength: 1,
    maxLength: PUSH_PROVIDER_LIMITS.p8PemChars,
    description: 'The .p8 key file’s text: a PEM "PRIVATE KEY" (PKCS#8) block holding an EC P-256 key. Sealed at rest; never answered.',
  }),
};

export const AddApnsProviderBody = Type.Object({ providerId: ProviderId, ...ApnsKeys, ...ApnsFields });
export const UpdateApnsProviderBody = Type.Object({
  providerId: ProviderId,
  keyId: Type.Optional(ApnsKeys.keyId),
  teamId: Type.Optional(ApnsKeys.teamId),
  bundleId: Type.Optional(ApnsKeys.bundleId),
  p8Key: Type.Optional(ApnsKeys.p8Key),
  ...ApnsFields,
});

// -- Answers --

const Flags = Type.Object({ chat: Type.Boolean(), call: Type.Boolean() });
const Common = {
  providerId: Type.String(),
  isDefault: Type.Boolean({ description: 'Whether it is the app’s default of its kind: a push token registered with no provider id is sent through it.' }),
};
const Times = { createdAt: UnixTime('Unix seconds.'), updatedAt: UnixTime('Unix seconds.') };

export const FcmProvider = Type.Object(
  {
    ...Common,
    serviceAccountFilename: Type.Optional(Type.String()),
    serviceAccountCreds: Type.Object(
      { type: Type.Literal('service_account'), project_id: Type.String(), client_email: Type.String(), private_key_id: Type.Optional(Type.String()) },
      { description: 'The service account, without its private key.' },
    ),
    notificationInPayload: Type.Object({ ios: Flags, android: Flags, web: Flags }),
    ...Times,
  },
  { description: 'An FCM provider.' },
);

export const ApnsProvider = Type.Object(
  {
    ...Common,
    keyId: Type.String(),
    teamId: Type.String(),
    bundleId: Type.String(),
    p8KeyFilename: Type.Optional(Type.String()),
    includeContentAvailable: Type.Boolean(),
    includeMutableContent: Type.Boolean(),
    productionMode: Type.Boolean(),
    ...Times,
  },
  { description: 'An APNs provider, without its .p8 key.' },
);

const List = <T extends TSchema>(provider: T) => Data(Type.Object({ pushProviders: Type.Array(provider, { description: 'Oldest first.' }) }));
const Changed = <T extends TSchema>(provider: T) =>
  Data(
    Type.Object({
      success: Type.Boolean(),
      pushProviders: Type.Array(provider, { description: 'The app’s providers of this kind after the change, oldest first.' }),
    }),
  );

export const FcmProvidersResponse = List(FcmProvider);
export const FcmProvidersChangedResponse = Changed(FcmProvider);
export const ApnsProvidersResponse = List(ApnsProvider);
export const ApnsProvidersChangedResponse = Changed(ApnsProvider);
