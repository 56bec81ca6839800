import { detailsOf, fillTemplate, mentions, notificationOf, type NotifiedMessage } from './payload.js';
import type { AppNotificationSettings } from './preferences.js';

/**
 * What an e-mail or SMS digest says (docs/notifications.md, "E-mail and SMS"): the messages a
 * recipient has not read in one conversation, each as its push notification's body would say it
 * (the privacy version when the recipient's preferences ask), and the subject (e-mail) or text
 * (SMS) from the app's templates, filled with `{{messages.length}}`, `{{senderDetails.name}}` and
 * `{{groupDetails.name}}`.
 */

export type DigestChannel = 'email' | 'sms';

/** A person as the digest names them (the vendor's custom-provider payloads). */
export interface DigestPerson {
  uid: string;
  name?: string;
  avatar?: string;
}

/** One message of a digest. */
export interface DigestMessage {
  sender: DigestPerson;
  /** The message's text, or a description ("📷 Has sent an image"), as its push notification's body. */
  message: string;
  /** The message as the REST API renders it. */
  messageObject: Record<string, unknown>;
}

export interface DigestContent {
  messages: DigestMessage[];
  /** The sender of the latest message. */
  senderDetails: DigestPerson;
  /** Group conversations: the group. */
  groupDetails?: { guid: string; name: string };
  /** E-mail: the subject. */
  subject: string;
  /** SMS: the text. */
  smsContent: string;
  /** E-mail: the text part, a line per message (`Alice: Hi Bob`). */
  text: string;
}

/** The digest of `messages` (one conversation's, oldest first, at least one) to `recipient`. */
export function digestOf(settings: AppNotificationSettings, recipient: string, messages: readonly NotifiedMessage[], privacy: boolean): DigestContent {
  const list: DigestMessage[] = messages.map((message) => {
    const details = notificationOf(settings, message, { privacy, mentioned: mentions(message, recipient) });
    const sender: DigestPerson = { uid: message.sender, name: details.senderName };
    if (details.senderAvatar !== undefined) sender.avatar = details.senderAvatar;
    return { sender, message: details.body, messageObject: message as unknown as Record<string, unknown> };
  });
  const latest = messages[messages.length - 1]!;
  const group = latest.receiverType === 'group';
  const senderDetails = list[list.length - 1]!.sender;
  const groupDetails = group ? { guid: latest.receiver, name: detailsOf(latest, '', '').receiverName } : undefined;
  const which = privacy ? 'Privacy' : 'Default';
  const context = { messages: list, senderDetails, groupDetails };
  const subjects = templateOf(settings, `emailSubjectTemplate${which}`);
  const texts = templateOf(settings, `smsContentTemplate${which}`);
  const subject = fillTemplate((group ? subjects.subjectGroup : subjects.subjectOneOnOne) ?? '', context) || `${list.length} new message(s)`;
  const smsContent = fillTemplate((group ? texts.bodyGroup : texts.bodyOneOnOne) ?? '', context) || `${list.length} new message(s)`;
  const text = list.map((m) => `${m.sender.name ?? m.sender.uid}: ${m.message}`).join('\n');
  const content: DigestContent = { messages: list, senderDetails, subject, smsContent, text };
  if (groupDetails) content.groupDetails = groupDetails;
  return content;
}

function templateOf(settings: AppNotificationSettings, name: string): Record<string, string> {
  const template = (settings.templates as Record<string, unknown>)[name];
  return typeof template === 'object' && template !== null ? (template as Record<string, string>) : {};
}
