import crypto from 'node:crypto';
import type { SetupChanges } from './setup-changes.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest, type ErrorDetails } from '../../domain/errors.js';
import { HOOK_FAILURE_MODES, HOOK_LIMITS, hookUrlProblem, type HookFailureMode } from '../../domain/moderation/hook.js';
import { maskSecret } from '../../domain/secrets.js';
import { toUnix } from '../../domain/time.js';
import type { ModerationHooksRepository, StoredHook } from '../../repositories/moderation/hooks.repository.js';

/** The moderation hook as its routes answer it. */
export interface HookView {
  url: string;
  enabled: boolean;
  timeoutMs: number;
  onFailure: HookFailureMode;
  createdAt: number;
  updatedAt: number;
  /** In plain text in the answer of the change that made it (creation, rotateSecret); masked everywhere else. */
  signingSecret: string;
}

export interface HookInput {
  url: string;
  enabled?: boolean;
  timeoutMs?: number;
  onFailure?: string;
  /** A new signing secret (a hook being created always gets one). */
  rotateSecret?: boolean;
}

/**
 * An app's moderation hook (docs/compatibility.md, "Parley extensions"): the endpoint the
 * Moderator asks about each message, its timeout, what a failed call does, and the secret that
 * signs the calls. Every change is a SetupChanges run (the app's moderation version moves, so each
 * node's compiled set-up is rebuilt).
 */
export class ModerationHookService {
  constructor(
    private readonly deps: {
      hooks: ModerationHooksRepository;
      /** Each change moves the app's moderation version, and is told after its commit. */
      changes: SetupChanges;
      /** PARLEY_WEBHOOK_ALLOW_PRIVATE: http URLs and private or loopback hosts are allowed. */
      allowPrivate: boolean;
    },
  ) {}

  async get(ctx: RequestContext): Promise<HookView> {
    const hook = await this.deps.hooks.get(ctx.appId);
    if (!hook) throw hookNotFound();
    return view(hook, false);
  }

  /** Creates the app's hook or replaces it: the fields not given take their defaults; the secret is kept unless `rotateSecret`. */
  async set(ctx: RequestContext, input: HookInput): Promise<HookView> {
    const appId = ctx.appId;
    const checked = this.checked(input);
    const { hook, shown } = await this.deps.changes.run(ctx, 'set_moderation_hook', async (tx) => {
      const current = await this.deps.hooks.get(appId, tx);
      const fresh = current === undefined || input.rotateSecret === true;
      const secret = fresh ? crypto.randomBytes(32).toString('hex') : current.secret;
      const hook = await this.deps.hooks.upsert(appId, { url: checked.url, enabled: checked.enabled, timeoutMs: checked.timeoutMs, onFailure: checked.onFailure, secret }, tx);
      return { hook, shown: fresh };
    });
    return view(hook, shown);
  }

  async delete(ctx: RequestContext): Promise<{ success: true; message: string }> {
    const appId = ctx.appId;
    await this.deps.changes.run(ctx, 'delete_moderation_hook', async (tx) => {
      // Thrown inside: the version does not move for nothing.
      if (!(await this.deps.hooks.delete(appId, tx))) throw hookNotFound();
    });
    return { success: true, message: 'The moderation hook has been deleted.' };
  }

  /** The input's fields checked (the schema checks them for the REST path too), with their defaults. */
  private checked(input: HookInput): { url: string; enabled: boolean; timeoutMs: number; onFailure: HookFailureMode } {
    const details: ErrorDetails = {};
    const urlProblem = typeof input.url === 'string' ? hookUrlProblem(input.url, this.deps.allowPrivate) : 'is required';
    if (urlProblem) details.url = urlProblem;
    const timeoutMs = input.timeoutMs ?? HOOK_LIMITS.defaultTimeoutMs;
    if (!Number.isInteger(timeoutMs) || timeoutMs < HOOK_LIMITS.minTimeoutMs || timeoutMs > HOOK_LIMITS.maxTimeoutMs) {
      details.timeoutMs = `must be an integer from ${HOOK_LIMITS.minTimeoutMs} to ${HOOK_LIMITS.maxTimeoutMs}`;
    }
    const onFailure = input.onFailure ?? 'open';
    if (!isFailureMode(onFailure)) details.onFailure = `must be one of ${HOOK_FAILURE_MODES.join(', ')}`;
    if (Object.keys(details).length > 0) throw badRequest(details);
    return { url: input.url, enabled: input.enabled ?? true, timeoutMs, onFailure: onFailure as HookFailureMode };
  }
}

function isFailureMode(value: string): value is HookFailureMode {
  return (HOOK_FAILURE_MODES as readonly string[]).includes(value);
}

function hookNotFound(): AppError {
  return new AppError('ERR_MODERATION_HOOK_NOT_FOUND');
}

function view(hook: StoredHook, secretShown: boolean): HookView {
  return {
    url: hook.url,
    enabled: hook.enabled,
    timeoutMs: hook.timeoutMs,
    onFailure: hook.onFailure,
    createdAt: toUnix(hook.createdAt),
    updatedAt: toUnix(hook.updatedAt),
    // 4 characters at each end: enough to tell which secret a receiver holds.
    signingSecret: secretShown ? hook.secret : maskSecret(hook.secret, 4, 4),
  };
}
