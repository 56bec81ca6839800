/**
 * The moderation hook (docs/moderation.md): an app's HTTPS endpoint asked about each message
 * before it is stored, beyond the vendor's REST surface (as Stream's before-message-send hook).
 */
import crypto from 'node:crypto';
import { DEFAULT_HOOK_REASON, HOOK_ACTIONS, HOOK_LIMITS } from '../../domain/moderation/hook.js';
import { signatureHeader } from '../../domain/webhook-signature.js';
import { PARLEY_VERSION } from '../../version.js';
import { WebhookSender } from '../webhook-sender.js';

/** An app's hook, as stored (moderation_hooks). */
export interface HookSettings {
  url: string;
  enabled: boolean;
  timeoutMs: number;
  /** What a failed call does: `open` lets the message through, `closed` holds it for review. */
  onFailure: 'open' | 'closed';
  /** Signs each call (X-Parley-Signature), as webhook deliveries are signed. */
  secret: string;
}

/** What the hook is asked about: the message about to be stored. */
export interface HookQuestion {
  appId: string;
  /** A send (or reply, or bot message), or an edit of a message already stored. */
  kind: 'send' | 'edit';
  message: {
    /** An edit's message id; absent for a send (the message has no id yet). */
    id?: string;
    sender: string;
    receiver: string;
    receiverType: 'user' | 'group';
    conversationId: string;
    category: string;
    type: string;
    data: Record<string, unknown>;
    parentId?: string;
  };
}

/** The hook's answer: let it through, hold it for review, or refuse it; or why the call failed. */
export type HookAnswer = { decision: 'allow' } | { decision: 'block' | 'drop'; reason: string } | { failed: string };

/** What an answer (its status and body) means; anything but the protocol's answer is a failure. */
function readAnswer(status: number, body: string): HookAnswer {
  if (status !== 200) return { failed: `answered HTTP ${status}` };
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch {
    return { failed: 'the answer is not JSON' };
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { failed: 'the answer is not a JSON object' };
  const { action, reason } = answer as { action?: unknown; reason?: unknown };
  if (typeof action !== 'string' || !(HOOK_ACTIONS as readonly string[]).includes(action)) {
    return { failed: `the answer's action is not one of ${HOOK_ACTIONS.join(', ')}` };
  }
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > HOOK_LIMITS.reasonLength)) {
    return { failed: `the answer's reason is not a string of at most ${HOOK_LIMITS.reasonLength} characters` };
  }
  if (action === 'allow') return { decision: 'allow' };
  return { decision: action as 'block' | 'drop', reason: reason || DEFAULT_HOOK_REASON };
}

/**
 * Asks an app's moderation hook about a message: one signed POST of the question, answered
 * within the hook's timeout by `{"action": "allow" | "block" | "drop", "reason"?: string}` with
 * HTTP 200. Anything else (another status, no answer in time, a connection error, an address
 * refused as webhooks' are, a body that is not such an object) is `{failed}`: `ask` never
 * throws, and what a failure does is the hook's `onFailure` (Moderator).
 *
 * The HTTP is WebhookSender's (no redirects, private addresses refused at connect unless the
 * deployment allows them), with a pool of its own: a slow hook does not hold webhook deliveries'
 * connections, nor they the hook's.
 */
export class ModerationHookClient {
  private readonly sender: WebhookSender;

  constructor(
    private readonly options: {
      /** PARLEY_WEBHOOK_ALLOW_PRIVATE: http URLs and private or loopback hosts are allowed. */
      allowPrivate: boolean;
      /** Connections kept to one hook at once (sends beyond them wait, within their timeout). */
      connectionsPerHost?: number;
      /** Unix milliseconds, for the signature's time. */
      now?: () => number;
    },
  ) {
    this.sender = new WebhookSender({
      timeoutMs: HOOK_LIMITS.maxTimeoutMs,
      allowPrivate: options.allowPrivate,
      userAgent: `Parley-Moderation/${PARLEY_VERSION}`,
      connectionsPerHost: options.connectionsPerHost ?? 64,
    });
  }

  async ask(hook: HookSettings, question: HookQuestion): Promise<HookAnswer> {
    try {
      const body = JSON.stringify(question);
      const at = Math.floor((this.options.now ?? Date.now)() / 1000);
      const headers = { 'x-parley-signature': signatureHeader([hook.secret], at, body), 'x-parley-hook-id': crypto.randomUUID() };
      const result = await this.sender.exchange(hook.url, body, headers, { timeoutMs: hook.timeoutMs, maxAnswerBytes: HOOK_LIMITS.answerBytes });
      return 'error' in result ? { failed: result.error } : readAnswer(result.status, result.body);
    } catch (error) {
      return { failed: (error as Error).message };
    }
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.sender.close();
  }
}
