import { maskSecret } from '../secrets.js';
import { WEBHOOK_LIMITS, webhookUrlProblem } from '../webhooks.js';

/**
 * The app's SMS and e-mail providers (Twilio, SendGrid) and its custom providers, one webhook per
 * channel (docs/notifications.md): their shapes, limits and how their secrets are shown.
 */

export const CUSTOM_PROVIDER_CHANNELS = ['push', 'sms', 'email'] as const;
export type CustomProviderChannel = (typeof CUSTOM_PROVIDER_CHANNELS)[number];

export const CHANNEL_PROVIDER_LIMITS = {
  /** Twilio auth tokens are 32 hex digits; the vendor's own example has 31. */
  authTokenMinLength: 16,
  authTokenLength: 128,
  /** SendGrid API keys are `SG.` and 66 more characters. */
  apiKeyMinLength: 19,
  apiKeyLength: 200,
  templateIdLength: 100,
  unsubscribeGroupIdLength: 20,
  senderNameLength: 100,
  /** RFC 5321: a path of at most 256 octets, the address at most 254. */
  emailLength: 254,
  emailLocalLength: 64,
  phoneNumberLength: 16,
  urlLength: WEBHOOK_LIMITS.urlLength,
  usernameLength: WEBHOOK_LIMITS.usernameLength,
  passwordLength: WEBHOOK_LIMITS.passwordLength,
} as const;

/** A Twilio account SID: `AC` and 32 hex digits. */
export const TWILIO_ACCOUNT_SID = /^AC[0-9a-fA-F]{32}$/;
/** A Twilio messaging service SID: `MG` and 32 hex digits. */
export const TWILIO_MESSAGING_SERVICE_SID = /^MG[0-9a-fA-F]{32}$/;
/** A phone number in E.164: `+`, a country code not starting with 0, at most 15 digits in all. */
export const E164_PHONE_NUMBER = /^\+[1-9][0-9]{1,14}$/;
const TWILIO_AUTH_TOKEN = new RegExp(`^[A-Za-z0-9]{${CHANNEL_PROVIDER_LIMITS.authTokenMinLength},${CHANNEL_PROVIDER_LIMITS.authTokenLength}}$`);
/** Every SendGrid API key starts with `SG.`; the rest is base64url text and dots. */
const SENDGRID_API_KEY = /^SG\.[A-Za-z0-9_.=+/-]+$/;
/** A dynamic template (`d-` and 32 hex digits) or a legacy one (a UUID), or another id of SendGrid's. */
const SENDGRID_TEMPLATE_ID = /^[A-Za-z0-9_-]+$/;
const SENDGRID_GROUP_ID = /^[0-9]+$/;

/** Control characters (C0, DEL, C1) and invisible format characters: never in a name, header or URL. */
const CONTROL = /[\p{Cc}\p{Cf}]/u;
/** The same, or any whitespace. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Z}\s]/u;

/** What a masked password looks like: it says only that one is stored. */
export const MASKED_PASSWORD = '********';

/** Twilio's auth token as the API shows it: its first and last 4 characters. */
export function maskAuthTokenOf(token: string): string {
  return maskSecret(token, 4, 4);
}

/** SendGrid's API key as the API shows it: `SG.` with the next 3 characters, and its last 4. */
export function maskApiKeyOf(key: string): string {
  return maskSecret(key, 6, 4);
}

/** Why `raw` is not a Twilio auth token, or undefined. */
export function twilioAuthTokenProblem(raw: string): string | undefined {
  if (TWILIO_AUTH_TOKEN.test(raw)) return undefined;
  const { authTokenMinLength: min, authTokenLength: max } = CHANNEL_PROVIDER_LIMITS;
  return `must be the account's auth token: ${min}-${max} letters and digits (Twilio's are 32 hex digits)`;
}

/** Why `raw` is not a sender Twilio can send from, or undefined: a phone number in E.164, or a messaging service SID. */
export function twilioSenderProblem(raw: string): string | undefined {
  if (E164_PHONE_NUMBER.test(raw) || TWILIO_MESSAGING_SERVICE_SID.test(raw)) return undefined;
  return 'must be a phone number in E.164 form (such as +13611364718) or a messaging service SID (MG and 32 hex digits)';
}

/** Whether a valid Twilio sender is a messaging service rather than a phone number. */
export function isMessagingService(sender: string): boolean {
  return TWILIO_MESSAGING_SERVICE_SID.test(sender);
}

export function twilioAccountSidProblem(raw: string): string | undefined {
  return TWILIO_ACCOUNT_SID.test(raw) ? undefined : 'must be an account SID: AC and 32 hex digits';
}

export function sendGridApiKeyProblem(raw: string): string | undefined {
  const { apiKeyMinLength: min, apiKeyLength: max } = CHANNEL_PROVIDER_LIMITS;
  if (raw.length < min || raw.length > max || !SENDGRID_API_KEY.test(raw)) {
    return `must be a SendGrid API key: SG. and more letters, digits, dots, hyphens or underscores (${min}-${max} characters in all)`;
  }
  return undefined;
}

export function sendGridTemplateIdProblem(raw: string): string | undefined {
  const max = CHANNEL_PROVIDER_LIMITS.templateIdLength;
  if (raw.length === 0 || raw.length > max || !SENDGRID_TEMPLATE_ID.test(raw)) {
    return `must be a template id (such as d- and 32 hex digits): 1-${max} letters, digits, hyphens or underscores`;
  }
  return undefined;
}

export function sendGridGroupIdProblem(raw: string): string | undefined {
  const max = CHANNEL_PROVIDER_LIMITS.unsubscribeGroupIdLength;
  return raw.length <= max && SENDGRID_GROUP_ID.test(raw) ? undefined : `must be an unsubscribe group id: 1-${max} digits`;
}

/** Why `raw` cannot be the sender's name of an e-mail, or undefined (it goes into the From header). */
export function senderNameProblem(raw: string): string | undefined {
  const max = CHANNEL_PROVIDER_LIMITS.senderNameLength;
  if (raw.trim().length === 0 || raw.length > max) return `must be 1-${max} characters, not only spaces`;
  if (CONTROL.test(raw)) return 'must not hold line breaks or other control characters';
  return undefined;
}

const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const DNS_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * Why `raw` is not an e-mail address a provider can send from or to, or undefined: `local@domain`
 * with a dot-atom local part (RFC 5322, no quoted forms or comments) and a domain of at least two
 * DNS labels (IDNs in their ASCII `xn--` form).
 */
export function emailAddressProblem(raw: string): string | undefined {
  const problem = 'must be an e-mail address, such as noreply@example.com';
  if (raw.length > CHANNEL_PROVIDER_LIMITS.emailLength) return `must be at most ${CHANNEL_PROVIDER_LIMITS.emailLength} characters`;
  const at = raw.lastIndexOf('@');
  if (at <= 0) return problem;
  const local = raw.slice(0, at);
  const labels = raw.slice(at + 1).split('.');
  if (local.length > CHANNEL_PROVIDER_LIMITS.emailLocalLength || !EMAIL_LOCAL.test(local)) return problem;
  if (labels.length < 2 || !labels.every((label) => DNS_LABEL.test(label)) || /^[0-9]+$/.test(labels[labels.length - 1]!)) return problem;
  return undefined;
}

/**
 * Why a custom provider may not call `raw`, or undefined: the rule of webhook URLs
 * (webhookUrlProblem: https to a public host unless the deployment sets
 * PARLEY_WEBHOOK_ALLOW_PRIVATE, no user name or password in it; the address a name resolves to
 * is checked again at each call), and no whitespace or control character anywhere: such a URL
 * is refused as given, never trimmed.
 */
export function customProviderUrlProblem(raw: string, allowPrivate: boolean): string | undefined {
  if (raw.length === 0) return 'must not be empty';
  if (UNSEEN.test(raw)) return 'must not hold whitespace or control characters';
  return webhookUrlProblem(raw, allowPrivate);
}

/** Why `raw` cannot be a Basic-auth user name, or undefined (RFC 7617: no colon). */
export function basicAuthUsernameProblem(raw: string): string | undefined {
  const max = CHANNEL_PROVIDER_LIMITS.usernameLength;
  if (raw.length > max) return `must be at most ${max} characters`;
  if (raw.includes(':')) return 'must not hold a colon (Basic auth joins the user name and password with one)';
  if (CONTROL.test(raw)) return 'must not hold control characters';
  return undefined;
}

export function basicAuthPasswordProblem(raw: string): string | undefined {
  const max = CHANNEL_PROVIDER_LIMITS.passwordLength;
  if (raw.length > max) return `must be at most ${max} characters`;
  if (CONTROL.test(raw)) return 'must not hold control characters';
  return undefined;
}

/** The field of a custom provider's "only users with stored contact details" option, per channel (none for push). */
export const STORED_CONTACT_FIELD = { push: undefined, sms: 'useStoredPhNo', email: 'useStoredEmailID' } as const satisfies Record<CustomProviderChannel, string | undefined>;

/** Where a sealed secret belongs (SecretBox's context): the app, the provider and the field. */
export function secretContext(appId: string, provider: 'twilio' | 'sendgrid' | `custom-${CustomProviderChannel}`, field: string): string {
  return `${appId}:${provider}:${field}`;
}
