import { urlControlProblem, webhookUrlProblem } from '../webhooks.js';

/**
 * The moderation hook's limits (docs/compatibility.md, "Parley extensions"): an app's HTTPS
 * endpoint asked about each message before it is stored.
 */
export const HOOK_LIMITS = {
  urlLength: 2_000,
  minTimeoutMs: 100,
  maxTimeoutMs: 5_000,
  defaultTimeoutMs: 1_500,
  /** The longest `reason` an answer may give. */
  reasonLength: 500,
  /** The most of an answer's body read: a larger answer is a failed call. */
  answerBytes: 16 * 1024,
} as const;

export const HOOK_FAILURE_MODES = ['open', 'closed'] as const;
export type HookFailureMode = (typeof HOOK_FAILURE_MODES)[number];

/** What a hook may answer in `action`. */
export const HOOK_ACTIONS = ['allow', 'block', 'drop'] as const;

/** The reason of a `block` or `drop` that gives none. */
export const DEFAULT_HOOK_REASON = 'the moderation hook';

/** Control characters (C0, DEL, C1), invisible format characters (bidi marks, zero widths) and any whitespace. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Z}\s]/u;

/**
 * Why the moderation hook may not call `raw`, or undefined when it may. The rules of webhook
 * URLs (webhookUrlProblem: https to a public host unless the deployment allows private
 * addresses; the address a name resolves to is checked again at each call), with a longer URL
 * allowed, no user name or password (the calls are signed instead), and no control character
 * or whitespace anywhere: such a URL is refused as given, never trimmed or encoded.
 */
export function hookUrlProblem(raw: string, allowPrivate: boolean): string | undefined {
  if (raw.length === 0) return 'must not be empty';
  if (raw.length > HOOK_LIMITS.urlLength) return `must be at most ${HOOK_LIMITS.urlLength} characters`;
  const control = urlControlProblem(raw);
  if (control) return control;
  if (UNSEEN.test(raw)) return 'must not hold whitespace or control characters';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL, such as https://moderation.example.com/parley';
  }
  if (url.username || url.password) return 'must not hold a user name or password: the calls are signed (X-Parley-Signature)';
  // The scheme and host are checked as a webhook's are; the path and query (which make the
  // URL longer than a webhook's may be) decide nothing there.
  return webhookUrlProblem(`${url.protocol}//${url.host}/`, allowPrivate);
}
