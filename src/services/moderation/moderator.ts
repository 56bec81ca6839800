import type { RequestContext } from '../../domain/context.js';
import { wireConversationId } from '../../domain/conversation-id.js';
import { AppError } from '../../domain/errors.js';
import type { RuleMatch } from '../../domain/moderation/matcher.js';
import { revisionId } from '../../domain/moderation/rules.js';
import { dataJsonWithStatus, type ModerationStatus } from '../../domain/moderation/status.js';
import { extended } from '../../domain/objects.js';
import type { EventsRepository } from '../../repositories/events.repository.js';
import type { HeldBy } from '../../repositories/message-store/held-messages.repository.js';
import type { Executor } from '../../db/transaction.js';
import type { Prepared } from '../message-content.js';
import type { HookAnswer, HookQuestion, HookSettings } from './hook-client.js';
import type { ModerationSetups } from './setups.js';

/** Where a message moderated goes, and what it is: a send's target, or the message an edit changes. */
export interface ModerationSubject {
  kind: 'send' | 'edit';
  sender: string;
  receiver: string;
  receiverType: 'user' | 'group';
  conversationId: string;
  parentId?: string;
  /** An edit: the message's id. */
  id?: string;
}

/** What moderation made of a message's content (`prepared`: with its data.moderation status when moderated). */
export type ModerationResult =
  | { outcome: 'unmoderated'; prepared: Prepared }
  | { outcome: 'approved'; prepared: Prepared }
  | { outcome: 'held'; prepared: Prepared; heldBy: HeldBy; eventData: Record<string, unknown> };

/** The id and name under which the moderation hook holds messages, as a rule would. */
export const HOOK_RULE = { id: 'moderation-hook', name: 'Moderation hook' } as const;

/**
 * The seam every message goes through before it is stored (docs/moderation.md): sends, thread
 * replies, bot messages and multi-receiver sends (MessagesService), edits (MessageEditsService),
 * and the data import when asked (`?moderate=true`). It evaluates the app's compiled rules
 * (ModerationSetups: no database round trip) and then, if the rules let the message through and
 * the app has one, asks its moderation hook. A `dropMessage` rule (or a hook's `drop`) refuses
 * the message with ERR_BLOCKED_BY_EXTENSION (ERR_BLOCKED_BY_WEBHOOK); a `blockMessage` rule (or
 * a hook's `block`, or a failed call of a hook that fails closed) holds it for review; otherwise
 * it is approved. An app with nothing to evaluate and no hook is not moderated at all: its
 * messages carry no moderation status.
 */
export class Moderator {
  constructor(
    private readonly deps: {
      setups: Pick<ModerationSetups, 'get'>;
      /** Asks an app's hook (ModerationHookClient.ask). */
      ask: (hook: HookSettings, question: HookQuestion) => Promise<HookAnswer>;
      events: EventsRepository;
      db: Executor;
    },
  ) {}

  /** Whether the app moderates at all (an enabled rule Parley evaluates, or a hook): when not, moderate changes nothing. */
  async moderates(ctx: RequestContext): Promise<boolean> {
    const setup = await this.deps.setups.get(ctx.appId);
    return setup.matcher.evaluates || setup.hook !== undefined;
  }

  /** `hook: false`: the rules alone (an import's records). */
  async moderate(ctx: RequestContext, prepared: Prepared, subject: ModerationSubject, options: { hook?: boolean } = {}): Promise<ModerationResult> {
    const setup = await this.deps.setups.get(ctx.appId);
    const hook = options.hook === false ? undefined : setup.hook;
    if (!setup.matcher.evaluates && !hook) return { outcome: 'unmoderated', prepared };
    const verdict = setup.matcher.evaluate({ category: prepared.category, type: prepared.type, data: prepared.data });
    if (verdict.action === 'dropMessage') {
      const match = verdict.matches.find((m) => m.action.includes('dropMessage'))!;
      throw new AppError('ERR_BLOCKED_BY_EXTENSION', { params: { rule: match.ruleId, name: match.ruleName }, details: matchDetails(ctx.appId, match) });
    }
    if (verdict.action === 'blockMessage') {
      const matches = verdict.matches.filter((m) => m.action.includes('blockMessage'));
      const heldBy = ruleHold(ctx.appId, matches[0]!, subject.kind);
      return held(prepared, heldBy, { moderation: matches.map((m) => heldByView(ruleHold(ctx.appId, m, subject.kind))) });
    }
    if (hook) {
      const answer = await this.deps.ask(hook, question(ctx.appId, prepared, subject));
      if ('failed' in answer) return this.hookFailed(ctx, hook, prepared, subject, answer.failed);
      if (answer.decision === 'drop') throw new AppError('ERR_BLOCKED_BY_WEBHOOK', { params: { reason: answer.reason } });
      if (answer.decision === 'block') {
        const heldBy = hookHold(subject.kind, answer.reason);
        return held(prepared, heldBy, { moderation: [heldByView(heldBy)] });
      }
    }
    return { outcome: 'approved', prepared: withStatus(prepared, 'approved') };
  }

  /**
   * A hook that failed: `moderation_engine_failed` is recorded at once (with the content, since
   * the message may never be stored), and the message goes through (open) or is held (closed).
   */
  private async hookFailed(ctx: RequestContext, hook: HookSettings, prepared: Prepared, subject: ModerationSubject, reason: string): Promise<ModerationResult> {
    ctx.log.warn({ reason, onFailure: hook.onFailure }, 'the moderation hook failed');
    const failure = { reason, onFailure: hook.onFailure, action: hook.onFailure === 'open' ? 'approved' : 'blockMessage' };
    await this.deps.events.record(
      ctx.appId,
      [{ trigger: 'moderation_engine_failed', conversationId: subject.conversationId, data: extended(failure, { message: question(ctx.appId, prepared, subject).message }) }],
      this.deps.db,
    );
    if (hook.onFailure === 'open') return { outcome: 'approved', prepared: withStatus(prepared, 'approved') };
    const heldBy = hookHold(subject.kind, `the hook failed (${reason}) and fails closed`);
    return held(prepared, heldBy, { moderation: [heldByView(heldBy)] });
  }
}

function held(prepared: Prepared, heldBy: HeldBy, eventData: Record<string, unknown>): ModerationResult {
  return { outcome: 'held', prepared: withStatus(prepared, 'pending'), heldBy, eventData };
}

/** The content with its data.moderation status (prepare leaves no `moderation` key in data). */
export function withStatus(prepared: Prepared, status: ModerationStatus): Prepared {
  return extended(prepared, {
    data: extended(prepared.data, { moderation: { status } }),
    dataJson: dataJsonWithStatus(prepared.dataJson, status),
  });
}

function ruleHold(appId: string, match: RuleMatch, kind: 'send' | 'edit'): HeldBy {
  return { ruleId: match.ruleId, ruleName: match.ruleName, revisionId: revisionId(appId, match.ruleId, match.revision), condition: match.condition, action: match.action, kind };
}

function hookHold(kind: 'send' | 'edit', reason: string): HeldBy {
  return { ruleId: HOOK_RULE.id, ruleName: HOOK_RULE.name, revisionId: HOOK_RULE.id, condition: { reason }, action: ['blockMessage'], kind };
}

/** What held a message, as moderation events and the blocked-messages list show it. */
export interface HeldByView {
  ruleId: string;
  ruleName: string;
  revisionId: string;
  condition: unknown;
  action: string[];
}

export function heldByView(heldBy: HeldBy): HeldByView {
  return { ruleId: heldBy.ruleId, ruleName: heldBy.ruleName, revisionId: heldBy.revisionId, condition: heldBy.condition, action: heldBy.action };
}

/** The error details of a dropped message: which rule, revision and condition refused it. */
function matchDetails(appId: string, match: RuleMatch): Record<string, string> {
  return { ruleId: match.ruleId, revisionId: revisionId(appId, match.ruleId, match.revision), conditionId: String(match.condition.id) };
}

function question(appId: string, prepared: Prepared, subject: ModerationSubject): HookQuestion {
  const message: HookQuestion['message'] = {
    sender: subject.sender,
    receiver: subject.receiver,
    receiverType: subject.receiverType,
    conversationId: wireConversationId(subject.conversationId),
    category: prepared.category,
    type: prepared.type,
    data: prepared.data,
  };
  if (subject.id !== undefined) message.id = subject.id;
  if (subject.parentId !== undefined) message.parentId = subject.parentId;
  return { appId, kind: subject.kind, message };
}
