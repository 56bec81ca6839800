import type { Kysely } from 'kysely';
import { UniqueViolation } from '../../db/driver-errors.js';
import type { DB } from '../../db/schema.js';
import { withTransaction, type Executor } from '../../db/transaction.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest } from '../../domain/errors.js';
import { BUILT_IN_REASON_IDS, BUILT_IN_REASONS, builtInReason, isReasonId, type BuiltInReason, type Reason } from '../../domain/moderation/reasons.js';
import { MODERATION_LIMITS } from '../../domain/moderation/rules.js';
import { toUnix } from '../../domain/time.js';
import type { AppsRepository } from '../../repositories/apps.repository.js';
import type { ReasonRow, ReasonsRepository } from '../../repositories/moderation/reasons.repository.js';

export type { Reason };

export interface CreateReasonInput {
  id: string;
  name: string;
  description?: string;
}

export interface UpdateReasonInput {
  name?: string;
  description?: string;
}

/** The most reasons an app can have: its own, and the built-in ones. */
export const REASONS_LIST_LIMIT = MODERATION_LIMITS.reasonsPerApp + BUILT_IN_REASONS.length;

/**
 * Reasons to flag a message for (domain/moderation/reasons.ts): the built-in ones, as the app
 * changed them, and the app's own (at most MODERATION_LIMITS.reasonsPerApp). Ids are kept as
 * sent (case counts).
 */
export class ReasonsService {
  constructor(
    private readonly deps: {
      db: Kysely<DB>;
      reasons: ReasonsRepository;
      apps: Pick<AppsRepository, 'get'>;
    },
  ) {}

  /** list-reasons: the built-in reasons in their order, then the app's own, oldest first. */
  async list(ctx: RequestContext): Promise<{ data: Reason[]; meta: { current: { limit: number; count: number } } }> {
    const { rows, deleted } = await this.deps.reasons.list(ctx.appId);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const data: Reason[] = [];
    const shown = BUILT_IN_REASONS.filter((reason) => !byId.has(reason.id) && !deleted.has(reason.id));
    const since = shown.length > 0 ? await this.appCreatedAt(ctx) : 0;
    for (const reason of BUILT_IN_REASONS) {
      const row = byId.get(reason.id);
      if (row) data.push(toReason(row));
      else if (!deleted.has(reason.id)) data.push(builtIn(reason, since));
    }
    for (const row of rows) if (!builtInReason(row.id)) data.push(toReason(row));
    return { data, meta: { current: { limit: REASONS_LIST_LIMIT, count: data.length } } };
  }

  /** get-reason-details. */
  async get(ctx: RequestContext, id: string): Promise<Reason> {
    const reason = await this.find(ctx, id);
    if (!reason) throw reasonNotFound(id);
    return reason;
  }

  /** Whether the app has a reason with this id (flag-a-message's reasonId). */
  async isReason(ctx: RequestContext, id: string, tx?: Executor): Promise<boolean> {
    if (!isReasonId(id)) return false;
    // A built-in reason is there unless deleted; a changed one has a row too, and a deleted one none.
    if (builtInReason(id)) return !(await this.deps.reasons.isDeletedDefault(ctx.appId, id, tx));
    return (await this.deps.reasons.get(ctx.appId, id, tx)) !== undefined;
  }

  /**
   * create-reason. A built-in reason's id is taken unless the app deleted it: then it is made
   * again, with what the body says. Built-in reasons do not count towards the limit.
   */
  async create(ctx: RequestContext, input: CreateReasonInput): Promise<Reason> {
    const { id } = input;
    try {
      return await withTransaction(
        this.deps.db,
        'create_reason',
        async (tx) => {
          await this.deps.reasons.lock(ctx.appId, tx);
          if (await this.deps.reasons.get(ctx.appId, id, tx)) throw reasonExists(id);
          if (builtInReason(id)) {
            if (!(await this.deps.reasons.isDeletedDefault(ctx.appId, id, tx))) throw reasonExists(id);
            await this.deps.reasons.removeDeletedDefault(ctx.appId, id, tx);
          } else if ((await this.deps.reasons.countExcept(ctx.appId, BUILT_IN_REASON_IDS, tx)) >= MODERATION_LIMITS.reasonsPerApp) {
            throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: MODERATION_LIMITS.reasonsPerApp, what: 'moderation reasons per app' } });
          }
          const row = await this.deps.reasons.create(ctx.appId, { id, name: input.name, description: input.description ?? null }, new Date(), tx);
          return toReason(row);
        },
        ctx.log,
      );
    } catch (error) {
      if (error instanceof UniqueViolation) throw reasonExists(id);
      throw error;
    }
  }

  /** update-reason-details: `name` and/or `description`. A built-in reason changed becomes the app's row, still built in. */
  async update(ctx: RequestContext, id: string, input: UpdateReasonInput): Promise<Reason> {
    if (input.name === undefined && input.description === undefined) throw badRequest({ name: 'or description must be given' });
    if (!isReasonId(id)) throw reasonNotFound(id);
    return withTransaction(
      this.deps.db,
      'update_reason',
      async (tx) => {
        // In turn with creates and deletes: a built-in reason deleted meanwhile stays deleted.
        await this.deps.reasons.lock(ctx.appId, tx);
        const updated = await this.deps.reasons.update(ctx.appId, id, input, tx);
        if (updated) return toReason(updated);
        const reason = builtInReason(id);
        if (!reason || (await this.deps.reasons.isDeletedDefault(ctx.appId, id, tx))) throw reasonNotFound(id);
        const values = { id, name: input.name ?? reason.name, description: input.description ?? reason.description };
        return toReason(await this.deps.reasons.create(ctx.appId, values, new Date((await this.appCreatedAt(ctx, tx)) * 1000), tx));
      },
      ctx.log,
    );
  }

  /** delete-reason. Flags already made with the reason keep its id. */
  async delete(ctx: RequestContext, id: string): Promise<{ success: true; message: string }> {
    if (!isReasonId(id)) throw reasonNotFound(id);
    return withTransaction(
      this.deps.db,
      'delete_reason',
      async (tx) => {
        await this.deps.reasons.lock(ctx.appId, tx);
        const removed = await this.deps.reasons.delete(ctx.appId, id, tx);
        if (builtInReason(id)) {
          if (!removed && (await this.deps.reasons.isDeletedDefault(ctx.appId, id, tx))) throw reasonNotFound(id);
          await this.deps.reasons.addDeletedDefault(ctx.appId, id, tx);
        } else if (!removed) {
          throw reasonNotFound(id);
        }
        return { success: true as const, message: `The reason with id ${id} has been deleted successfully.` };
      },
      ctx.log,
    );
  }

  /** The reason names of the app by id (deleted reasons absent), to show beside flags. */
  async names(ctx: RequestContext): Promise<Map<string, string>> {
    const { rows, deleted } = await this.deps.reasons.list(ctx.appId);
    const names = new Map<string, string>();
    for (const reason of BUILT_IN_REASONS) if (!deleted.has(reason.id)) names.set(reason.id, reason.name);
    for (const row of rows) names.set(row.id, row.name);
    return names;
  }

  private async find(ctx: RequestContext, id: string): Promise<Reason | undefined> {
    if (!isReasonId(id)) return undefined;
    const row = await this.deps.reasons.get(ctx.appId, id);
    if (row) return toReason(row);
    const reason = builtInReason(id);
    if (!reason || (await this.deps.reasons.isDeletedDefault(ctx.appId, id))) return undefined;
    return builtIn(reason, await this.appCreatedAt(ctx));
  }

  /** When the app was made, in unix seconds: the time its built-in reasons show until changed. */
  private async appCreatedAt(ctx: RequestContext, tx?: Executor): Promise<number> {
    const app = await this.deps.apps.get(ctx.appId, tx);
    return app ? toUnix(app.created_at) : 0;
  }
}

export function reasonNotFound(id: string): AppError {
  return new AppError('ERR_REASON_NOT_FOUND', { params: { id } });
}

function reasonExists(id: string): AppError {
  return new AppError('ERR_REASON_ALREADY_EXISTS', { params: { id } });
}

function toReason(row: ReasonRow): Reason {
  const reason: Reason = { id: row.id, name: row.name, createdAt: toUnix(row.created_at), updatedAt: toUnix(row.updated_at), default: builtInReason(row.id) !== undefined };
  if (row.description !== null) reason.description = row.description;
  return reason;
}

function builtIn(reason: BuiltInReason, since: number): Reason {
  return { id: reason.id, name: reason.name, description: reason.description, createdAt: since, updatedAt: since, default: true };
}
