import { badRequest, type ErrorDetails } from '../../domain/errors.js';
import {
  MASKED_PASSWORD,
  basicAuthPasswordProblem,
  basicAuthUsernameProblem,
  customProviderUrlProblem,
  emailAddressProblem,
  sendGridApiKeyProblem,
  sendGridGroupIdProblem,
  sendGridTemplateIdProblem,
  senderNameProblem,
  twilioAccountSidProblem,
  twilioAuthTokenProblem,
  twilioSenderProblem,
} from '../../domain/notifications/channel-providers.js';
import { isMasked } from '../../domain/secrets.js';

// The bodies of the channel providers' operations, as the vendor names their fields, and the
// checks of their values. The route schemas check types and lengths; these check forms and name
// the rule a value breaks. A field not given is undefined (an update keeps what is stored).

export interface TwilioInput {
  twilioAccountSID?: string;
  twilioAuthToken?: string;
  twilioSenderPhoneNumber?: string;
  isEnabled?: boolean;
}

export interface SendGridInput {
  sendGridApiKey?: string;
  sendGridTemplateID?: string;
  sendGridUnsubscribeGroupID?: string;
  senderName?: string;
  senderEmail?: string;
  allowEmailReplies?: boolean;
  /** null clears it. */
  senderEmailForReplies?: string | null;
  isEnabled?: boolean;
}

export interface CustomProviderInput {
  isEnabled?: boolean;
  webhookURL?: string;
  useBasicAuth?: boolean;
  basicAuthUsername?: string;
  basicAuthPassword?: string;
  /** SMS only. */
  useStoredPhNo?: boolean;
  /** E-mail only. */
  useStoredEmailID?: boolean;
}

/**
 * A secret as given: a new plain value, or the masked form the API answered (which keeps the
 * stored secret when it is that secret's mask; `problem` is the answer otherwise).
 */
export type GivenSecret = { plain: string } | { masked: string; problem: string };

/** The fields a save must have (the vendor's required fields). */
function requireFields(input: object, names: readonly string[], details: ErrorDetails): void {
  for (const name of names) {
    if ((input as Record<string, unknown>)[name] === undefined) details[name] = 'is required';
  }
}

/** Checks one optional string field with `problem`, recording what it breaks. */
function checkField(details: ErrorDetails, name: string, value: string | undefined, problem: (raw: string) => string | undefined): void {
  if (value === undefined) return;
  const found = problem(value);
  if (found) details[name] = found;
}

/** A secret field: a value of its form, or a masked value whose fate the stored secret decides. */
function secretField(details: ErrorDetails, name: string, value: string | undefined, problem: (raw: string) => string | undefined): GivenSecret | undefined {
  if (value === undefined) return undefined;
  const found = problem(value);
  if (!found) return { plain: value };
  if (isMasked(value)) return { masked: value, problem: found };
  details[name] = found;
  return undefined;
}

export interface CheckedTwilio {
  accountSid?: string;
  sender?: string;
  authToken?: GivenSecret;
  enabled?: boolean;
}

/** The Twilio body checked; a save (`complete`) must have every required field. */
export function checkTwilio(input: TwilioInput, complete: boolean): CheckedTwilio {
  const details: ErrorDetails = {};
  if (complete) requireFields(input, ['twilioAccountSID', 'twilioAuthToken', 'twilioSenderPhoneNumber'], details);
  checkField(details, 'twilioAccountSID', input.twilioAccountSID, twilioAccountSidProblem);
  checkField(details, 'twilioSenderPhoneNumber', input.twilioSenderPhoneNumber, twilioSenderProblem);
  const authToken = secretField(details, 'twilioAuthToken', input.twilioAuthToken, twilioAuthTokenProblem);
  if (Object.keys(details).length > 0) throw badRequest(details);
  return { accountSid: input.twilioAccountSID, sender: input.twilioSenderPhoneNumber, authToken, enabled: input.isEnabled };
}

export interface CheckedSendGrid {
  apiKey?: GivenSecret;
  templateId?: string;
  unsubscribeGroupId?: string;
  senderName?: string;
  senderEmail?: string;
  allowReplies?: boolean;
  replyToEmail?: string | null;
  enabled?: boolean;
}

export function checkSendGrid(input: SendGridInput, complete: boolean): CheckedSendGrid {
  const details: ErrorDetails = {};
  if (complete) requireFields(input, ['sendGridApiKey', 'sendGridTemplateID', 'sendGridUnsubscribeGroupID', 'senderName', 'senderEmail'], details);
  const apiKey = secretField(details, 'sendGridApiKey', input.sendGridApiKey, sendGridApiKeyProblem);
  checkField(details, 'sendGridTemplateID', input.sendGridTemplateID, sendGridTemplateIdProblem);
  checkField(details, 'sendGridUnsubscribeGroupID', input.sendGridUnsubscribeGroupID, sendGridGroupIdProblem);
  checkField(details, 'senderName', input.senderName, senderNameProblem);
  checkField(details, 'senderEmail', input.senderEmail, emailAddressProblem);
  // An empty address is none, as null is.
  const replyTo = input.senderEmailForReplies === '' ? null : input.senderEmailForReplies;
  checkField(details, 'senderEmailForReplies', replyTo ?? undefined, emailAddressProblem);
  if (Object.keys(details).length > 0) throw badRequest(details);
  return {
    apiKey,
    templateId: input.sendGridTemplateID,
    unsubscribeGroupId: input.sendGridUnsubscribeGroupID,
    senderName: input.senderName,
    senderEmail: input.senderEmail,
    allowReplies: input.allowEmailReplies,
    replyToEmail: replyTo,
    enabled: input.isEnabled,
  };
}

export interface CheckedCustom {
  enabled?: boolean;
  url?: string;
  useBasicAuth?: boolean;
  /** null: none (an empty string given). */
  username?: string | null;
  /** null: none (an empty string given). */
  password?: GivenSecret | null;
  onlyStoredContact?: boolean;
}

/**
 * A custom provider's body checked. `storedContactField` is the channel's option
 * (useStoredPhNo, useStoredEmailID), undefined for push.
 */
export function checkCustom(input: CustomProviderInput, complete: boolean, storedContactField: 'useStoredPhNo' | 'useStoredEmailID' | undefined, allowPrivate: boolean): CheckedCustom {
  const details: ErrorDetails = {};
  if (complete) requireFields(input, ['webhookURL'], details);
  checkField(details, 'webhookURL', input.webhookURL, (raw) => customProviderUrlProblem(raw, allowPrivate));
  const username = input.basicAuthUsername === '' ? null : input.basicAuthUsername;
  checkField(details, 'basicAuthUsername', username ?? undefined, basicAuthUsernameProblem);
  let password: GivenSecret | null | undefined;
  if (input.basicAuthPassword === '') password = null;
  else if (input.basicAuthPassword === MASKED_PASSWORD) password = { masked: MASKED_PASSWORD, problem: 'is the masked form of a password, and no password is stored: send the password' };
  else {
    checkField(details, 'basicAuthPassword', input.basicAuthPassword, basicAuthPasswordProblem);
    if (input.basicAuthPassword !== undefined) password = { plain: input.basicAuthPassword };
  }
  if (Object.keys(details).length > 0) throw badRequest(details);
  return {
    enabled: input.isEnabled,
    url: input.webhookURL,
    useBasicAuth: input.useBasicAuth,
    username,
    password,
    onlyStoredContact: storedContactField ? input[storedContactField] : undefined,
  };
}

/** Basic auth needs both a user name and a password (given now or stored before). */
export function checkBasicAuth(useBasicAuth: boolean, hasUsername: boolean, hasPassword: boolean): void {
  if (!useBasicAuth) return;
  const details: ErrorDetails = {};
  if (!hasUsername) details.basicAuthUsername = 'is required when useBasicAuth is true';
  if (!hasPassword) details.basicAuthPassword = 'is required when useBasicAuth is true';
  if (Object.keys(details).length > 0) throw badRequest(details);
}
