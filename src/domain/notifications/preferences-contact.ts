import { E164_PHONE_NUMBER } from './channel-providers.js';

/**
 * A user's contact details for e-mail and SMS notifications (notifications-*-contact-details):
 * an e-mail address of the usual shape, and a phone number in E.164.
 */

export const CONTACT_LIMITS = { emailLength: 254, emailLocalLength: 64, phoneLength: 16 } as const;

const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uFFFF-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\uFFFF-]+)*$/u;
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;
const TOP_LEVEL = /^(?:\p{L}{2,63}|xn--[a-z0-9-]{1,59})$/iu;

/** Whether `value` is an e-mail address: a dot-atom local part, then a domain of two labels or more. */
export function isEmailAddress(value: string): boolean {
  if (value.length > CONTACT_LIMITS.emailLength) return false;
  const at = value.lastIndexOf('@');
  if (at <= 0) return false;
  const local = value.slice(0, at);
  const domain = value.slice(at + 1);
  if (local.length > CONTACT_LIMITS.emailLocalLength || !LOCAL.test(local)) return false;
  const labels = domain.split('.');
  return labels.length >= 2 && labels.every((label) => LABEL.test(label)) && TOP_LEVEL.test(labels[labels.length - 1]!);
}

/** Whether `value` is a phone number in E.164: `+`, the country code and the number, 15 digits at most. */
export function isPhoneNumber(value: string): boolean {
  return E164_PHONE_NUMBER.test(value);
}
