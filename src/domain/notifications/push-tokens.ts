/**
 * Push tokens (docs/notifications.md, "Push tokens"): a device's token, registered for a user
 * through one of their auth tokens, with the platform it was issued for and the provider it is
 * sent through. The vendor's platforms (its PlatformFCM, PlatformAPNS and PlatformVOIP schemas).
 */

export const FCM_PLATFORMS = [
  'fcm_android',
  'fcm_ios',
  'fcm_web',
  'fcm_flutter_android',
  'fcm_flutter_ios',
  'fcm_react_native_android',
  'fcm_react_native_ios',
  'fcm_ionic_cordova_android',
  'fcm_ionic_cordova_ios',
] as const;

export const APNS_DEVICE_PLATFORMS = ['apns_ios_device', 'apns_flutter_device', 'apns_react_native_device', 'apns_ionic_cordova_device'] as const;

export const APNS_VOIP_PLATFORMS = ['apns_ios_voip', 'apns_flutter_voip', 'apns_ionic_cordova_voip', 'apns_react_native_voip'] as const;

export const PUSH_PLATFORMS = [...FCM_PLATFORMS, ...APNS_DEVICE_PLATFORMS, ...APNS_VOIP_PLATFORMS] as const;

export type PushPlatform = (typeof PUSH_PLATFORMS)[number];

/** The provider kind a platform's tokens are sent through. */
export type PushProviderKind = 'fcm' | 'apns';

/** `chat` for message notifications, `voip` for the VoIP (PushKit) tokens that ring calls. */
export type PushTokenType = 'chat' | 'voip';

/** The body field that carries the token for each family of platforms, as the vendor names it. */
export type PushTokenField = 'fcmToken' | 'deviceToken' | 'voipToken';

export const PUSH_TOKEN_FIELDS: readonly PushTokenField[] = ['fcmToken', 'deviceToken', 'voipToken'];

export const PUSH_TOKEN_LIMITS = {
  /**
   * The longest token, in printable ASCII characters. Real tokens are far shorter (FCM's ~160,
   * APNs' 64 hex); 512 is also the longest path parameter the router takes, so every token can
   * be named in DELETE /tokens/{pushToken}, and it fits a btree key.
   */
  tokenLength: 512,
  /** A user's tokens at most: registering one more drops the one registered least recently. */
  tokensPerUser: 100,
  providerIdLength: 100,
  timezoneLength: 64,
} as const;

/** A token's characters: printable ASCII, no space (FCM's and APNs' alphabets are within it). */
export const PUSH_TOKEN_PATTERN = '^[\\x21-\\x7E]+$';

const FCM = new Set<string>(FCM_PLATFORMS);
const VOIP = new Set<string>(APNS_VOIP_PLATFORMS);

export function providerKindOf(platform: PushPlatform): PushProviderKind {
  return FCM.has(platform) ? 'fcm' : 'apns';
}

export function tokenTypeOf(platform: PushPlatform): PushTokenType {
  return VOIP.has(platform) ? 'voip' : 'chat';
}

/** The body field a platform's token comes in. */
export function tokenFieldOf(platform: PushPlatform): PushTokenField {
  return FCM.has(platform) ? 'fcmToken' : VOIP.has(platform) ? 'voipToken' : 'deviceToken';
}

/** What the delivery engine sends to: one of a user's tokens (PushTokensRepository.tokensOf). */
export interface PushTarget {
  token: string;
  platform: PushPlatform;
  kind: PushProviderKind;
  tokenType: PushTokenType;
  /** The provider to send through; null: the app's default provider of `kind` when sending. */
  providerId: string | null;
  /** When the token was last registered (a removeInvalid for it passes this as notUpdatedSince). */
  updatedAt: Date;
}
