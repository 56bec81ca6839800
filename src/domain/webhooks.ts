import { BlockList, isIP } from 'node:net';
import { EVENT_ID_PATTERN, TRIGGERS, type Trigger } from './events.js';

/**
 * Webhooks as the vendor's management API describes them (docs/management-api.md, "Webhooks"): their
 * limits, the triggers a webhook may subscribe to, and which URLs a webhook may call.
 */
export const WEBHOOK_LIMITS = {
  perApp: 25,
  idLength: 50,
  nameLength: 50,
  urlLength: 255,
  usernameLength: 50,
  passwordLength: 100,
} as const;

/** A delivery id (X-Parley-Delivery) as a client names one: a bigint, written as event ids are. */
export const DELIVERY_ID_PATTERN = EVENT_ID_PATTERN;
const DELIVERY_ID = new RegExp(DELIVERY_ID_PATTERN);
export function isDeliveryId(raw: string): boolean {
  return DELIVERY_ID.test(raw);
}

/** A webhook id: letters, digits, underscores and hyphens, as the vendor's "alphanumeric, no spaces". */
export const WEBHOOK_ID_PATTERN = /^[A-Za-z0-9_-]{1,50}$/;

/** What each trigger Parley records means, as list-triggers shows it (the vendor's triggers; docs/management-api.md, "Webhooks"). */
export const TRIGGER_DESCRIPTIONS: Record<Trigger, string> = {
  message_sent: 'A message was sent (to a user or a group), including thread replies.',
  message_edited: 'A message was edited; the payload is the edit action message.',
  message_deleted: 'A message was deleted; the payload is the delete action message.',
  user_mentioned: 'A message mentioned users (<@uid:UID>); sent once per message.',
  message_delivery_receipt: 'A user marked a message (and those before it) as delivered.',
  message_read_receipt: 'A user marked a message (and those before it) as read.',
  message_reaction_added: 'A user reacted to a message.',
  message_reaction_removed: 'A user removed a reaction from a message.',
  user_blocked: 'A user blocked other users.',
  user_unblocked: 'A user unblocked other users.',
  user_connection_status_changed: 'A user went online (a first connection to the gateway) or offline (none left for the grace period).',
  group_created: 'A group was created.',
  group_updated: 'A group was updated.',
  group_deleted: 'A group was deleted.',
  group_member_joined: 'A user joined a group.',
  group_member_left: 'A member left a group.',
  group_member_added: 'Users were added to a group.',
  group_member_kicked: 'A member was kicked from a group.',
  group_member_banned: 'A user was banned from a group.',
  group_member_unbanned: 'A user was unbanned from a group.',
  group_member_scope_changed: "A member's scope in a group changed.",
  group_owner_transferred: 'The ownership of a group was handed to another member.',
  moderation_engine_approved: 'The moderation rules let a message through (apps with enabled rules or a moderation hook).',
  moderation_engine_blocked: 'The moderation rules or hook held a message for review; its message_sent comes when it is approved.',
  moderation_manual_approved: 'A moderator approved a message held for review.',
  moderation_engine_failed: 'The moderation hook failed (no answer in time, an error, a bad answer); the payload says what was done.',
};

/** The triggers a webhook may subscribe to, in the catalogue's order. */
export const WEBHOOK_TRIGGERS: readonly Trigger[] = TRIGGERS;

/**
 * Addresses a webhook may not call unless the deployment allows it (PARLEY_WEBHOOK_ALLOW_PRIVATE):
 * this machine, private and shared networks, link-local, multicast and reserved ranges, and the
 * documentation ranges. IPv6 addresses that carry an IPv4 address (see embeddedIpv4) are checked
 * as that IPv4 address, in every spelling.
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
// ::/96 (IPv4-compatible, deprecated by RFC 4291; `::` and `::1` among them) is refused whatever
// IPv4 address it carries: no public receiver has one, and a host with an automatic tunnel sends
// it to that IPv4 address. 2001::/23 holds Teredo (2001::/32), refused whole too: its last 32 bits
// are the obfuscated IPv4 address of a client behind a NAT, reached through a relay.
for (const [network, prefix] of [
  ['::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** Whether `address` (an IPv4 or IPv6 literal, in any spelling node accepts) is not a public internet address. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  const bytes = ipv6Bytes(address);
  if (bytes === undefined) return true;
  const embedded = embeddedIpv4(bytes);
  if (embedded !== undefined) return NON_PUBLIC.check(embedded, 'ipv4');
  return NON_PUBLIC.check(ipv6Text(bytes), 'ipv6');
}

/**
 * The IPv4 address an IPv6 address carries where a packet sent to it ends up at that IPv4
 * address (or is meant to), or undefined:
 * - `::ffff:0:0/96`, IPv4-mapped (a dual-stack socket connects to the IPv4 address), and
 *   `::ffff:0:0:0/96`, IPv4-translated (SIIT);
 * - `64:ff9b::/96`, NAT64's well-known prefix (the gateway connects to the IPv4 address);
 * - `2002::/16`, 6to4: bits 16-47 are the IPv4 address of the site's relay.
 */
function embeddedIpv4(bytes: Uint8Array): string | undefined {
  const zero = (from: number, to: number) => bytes.subarray(from, to).every((byte) => byte === 0);
  const ipv4 = (at: number) => `${bytes[at]}.${bytes[at + 1]}.${bytes[at + 2]}.${bytes[at + 3]}`;
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return ipv4(12);
  if (zero(0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && zero(10, 12)) return ipv4(12);
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12)) return ipv4(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return ipv4(2);
  return undefined;
}

/**
 * The 16 bytes of an IPv6 literal that isIP accepts: hex groups, one `::`, a dotted IPv4 tail, a
 * zone (`%eth0`, ignored). Undefined if it is none of these after all.
 */
function ipv6Bytes(address: string): Uint8Array | undefined {
  let text = address.replace(/%.*$/, '').toLowerCase();
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string | undefined) => (half ? half.split(':') : []);
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill('0'), ...rest];
  const bytes = new Uint8Array(16);
  for (const [n, group] of all.entries()) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return undefined;
    const value = Number.parseInt(group, 16);
    bytes[2 * n] = value >> 8;
    bytes[2 * n + 1] = value & 255;
  }
  return bytes;
}

/** Eight full hex groups, as BlockList reads them. */
function ipv6Text(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let n = 0; n < 16; n += 2) groups.push(((bytes[n]! << 8) | bytes[n + 1]!).toString(16));
  return groups.join(':');
}

/** Control characters: C0, DEL and C1. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: it finds control characters, on purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Why a URL Parley is to call (a webhook's, the moderation hook's) may not be stored for the
 * characters it holds: a control character anywhere in it as given, the ends, the user info, the
 * path and the query included (the URL parser would drop some and percent-encode the others, so
 * the check is of the raw text). Undefined when it holds none. The one check of every such URL.
 */
export function urlControlProblem(raw: string): string | undefined {
  return CONTROL.test(raw) ? 'must not hold control characters' : undefined;
}

/** Names that never reach a public host: this machine, one-label names, and special-use domains. */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|home\.arpa|localdomain)$/;

/**
 * Why a webhook may not call `raw`, or undefined when it may. By default a webhook must call a
 * public host over https; `allowPrivate` (PARLEY_WEBHOOK_ALLOW_PRIVATE) also lets it use http
 * and private or loopback hosts. A host name is checked by its form only: the delivery checks
 * the address it resolves to when it connects.
 */
export function webhookUrlProblem(raw: string, allowPrivate: boolean): string | undefined {
  const control = urlControlProblem(raw);
  if (control) return control;
  if (raw.length > WEBHOOK_LIMITS.urlLength) return `must be at most ${WEBHOOK_LIMITS.urlLength} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL, such as https://example.com/webhooks';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (url.protocol === 'http:' && !allowPrivate) {
    return 'must be an https URL (http is allowed only when the deployment sets PARLEY_WEBHOOK_ALLOW_PRIVATE=1)';
  }
  if (url.username || url.password) return 'must not hold a user name or password: use useBasicAuth, username and password';
  if (allowPrivate) return undefined;
  // The URL parser has normalised IPv4 written in other forms (2130706433, 0x7f.1) to dotted form.
  const host = url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (isIP(host) ? isNonPublicAddress(host) : !host.includes('.') || LOCAL_NAME.test(host)) {
    return `must call a public host: ${host} is a loopback, private, link-local or reserved address (allowed only when the deployment sets PARLEY_WEBHOOK_ALLOW_PRIVATE=1)`;
  }
  return undefined;
}

/** When deliveries are retried (docs/webhooks.md): PARLEY_WEBHOOK_RETRY_DELAYS and PARLEY_WEBHOOK_RETRY_HORIZON_HOURS. */
export interface RetrySchedule {
  /** The waits before the first retries, in ms (the vendor's 10 s and 30 s); later waits double the last, up to `maxDelayMs`. */
  delaysMs: readonly number[];
  maxDelayMs: number;
  /** No retry is scheduled later than this after a run's first attempt; the delivery is failed instead. */
  horizonMs: number;
}

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = { delaysMs: [10_000, 30_000], maxDelayMs: 3_600_000, horizonMs: 24 * 3_600_000 };

/**
 * When to retry a delivery whose `attempts`-th attempt (1-based, of the current run begun at
 * `firstAttemptAt`) failed at `failedAt`: a time, or undefined when the horizon is passed.
 */
export function nextRetryAt(schedule: RetrySchedule, attempts: number, firstAttemptAt: Date, failedAt: Date): Date | undefined {
  const listed = schedule.delaysMs;
  const last = listed[listed.length - 1] ?? 1_000;
  const delay = attempts <= listed.length ? listed[attempts - 1]! : Math.min(schedule.maxDelayMs, last * 2 ** (attempts - listed.length));
  const at = failedAt.getTime() + delay;
  return at > firstAttemptAt.getTime() + schedule.horizonMs ? undefined : new Date(at);
}
