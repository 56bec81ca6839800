import { MODERATION_ID_PATTERN } from './rules.js';

/**
 * Reasons users flag messages for (flag-a-message), as the API shows them. Every app has the
 * built-in reasons below until it changes them: an update writes the app's own row for the
 * reason (still built in: `default: true`), a delete a tombstone (moderation_deleted_defaults,
 * kind `reason`), after which the reason is neither listed nor accepted in a flag.
 */

export interface Reason {
  id: string;
  name: string;
  description?: string;
  /** Unix seconds; a built-in reason the app has not changed shows the app's creation time. */
  createdAt: number;
  updatedAt: number;
  /** A built-in reason (changed or not). */
  default: boolean;
}

export interface BuiltInReason {
  id: string;
  name: string;
  description: string;
}

/** In the order they are listed: "other" last, as a reason picker shows it. */
export const BUILT_IN_REASONS: readonly BuiltInReason[] = [
  { id: 'spam', name: 'Spam', description: 'Unwanted, repeated or promotional content, scams and phishing.' },
  { id: 'harassment', name: 'Harassment', description: 'Bullying, threats, intimidation or targeted abuse of a person.' },
  { id: 'hate-speech', name: 'Hate speech', description: 'Attacks on people for who they are: race, ethnicity, religion, gender, sexuality, disability.' },
  { id: 'violence', name: 'Violence', description: 'Threats of violence, incitement, or glorification of violent acts.' },
  { id: 'sexual-content', name: 'Sexual content', description: 'Sexually explicit material, or sexual content involving minors.' },
  { id: 'misinformation', name: 'Misinformation', description: 'False or misleading information presented as fact.' },
  { id: 'other', name: 'Other', description: 'Something else that breaks the community rules.' },
];

const BY_ID = new Map(BUILT_IN_REASONS.map((reason) => [reason.id, reason]));

export const BUILT_IN_REASON_IDS: readonly string[] = BUILT_IN_REASONS.map((reason) => reason.id);

export function builtInReason(id: string): BuiltInReason | undefined {
  return BY_ID.get(id);
}

const REASON_ID = new RegExp(MODERATION_ID_PATTERN);

/** Whether a reason could have this id (MODERATION_ID_PATTERN): one that cannot is not found, unread. */
export function isReasonId(id: string): boolean {
  return REASON_ID.test(id);
}
