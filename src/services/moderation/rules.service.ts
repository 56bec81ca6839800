import { UniqueViolation } from '../../db/driver-errors.js';
import type { Tx } from '../../db/transaction.js';
import type { SetupChanges } from './setup-changes.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest, type ErrorDetails } from '../../domain/errors.js';
import { BUILTIN_LIST_BY_ID, BUILTIN_RULE_BY_ID, effectiveLists, effectiveRules, overridesBuiltin } from '../../domain/moderation/defaults.js';
import { checkSetupBudget, MODERATION_LIMITS, type KeywordList, type ModerationRule } from '../../domain/moderation/rules.js';
import { toUnix } from '../../domain/time.js';
import type { KeywordListsRepository } from '../../repositories/moderation/keyword-lists.repository.js';
import type { RuleRow, ModerationRulesRepository } from '../../repositories/moderation/rules.repository.js';
import type { ModerationSetupRepository, StoredSetup } from '../../repositories/moderation/setup.repository.js';
import { readActions, readConditions, sameConditions, sameStrings, type ConditionInput, type ListLookup } from './rule-input.js';
import { listFromRow, ruleFromRevision, ruleFromRow, ruleView, type RuleView } from './views.js';

export interface RuleInput {
  id: string;
  name: string;
  description?: string;
  enabled?: boolean;
  conditions: ConditionInput[];
  action: string | string[];
  filters?: unknown[];
}

/** An update: every field optional; `conditions` and `action`, when given, replace the rule's. */
export type RuleUpdateInput = Partial<RuleInput>;

/** A page of a moderation list (`limit` per page, `page` from 1), answered with the vendor's `meta.current`. */
export interface ModerationPage {
  limit: number;
  page: number;
}

export interface ModerationList<T> {
  data: T[];
  meta: { current: { limit: number; count: number } };
}

export function pageOfList<T>(items: T[], page: ModerationPage): ModerationList<T> {
  const data = items.slice((page.page - 1) * page.limit, page.page * page.limit);
  return { data, meta: { current: { limit: page.limit, count: data.length } } };
}

/** The app's effective moderation set-up and its version, read at one instant: what the engine compiles. */
export interface ModerationSetup {
  version: string;
  rules: ModerationRule[];
  lists: KeywordList[];
}

/** Thrown inside an update's transaction when it changes nothing, so that the version is not moved. */
class Unchanged extends Error {
  constructor(readonly rule: ModerationRule) {
    super('unchanged');
  }
}

/**
 * Moderation rules (docs/compatibility.md, "Moderation rules and keyword lists"): the app's own
 * and the built-in ones, each change a new revision. Every change moves the app's moderation
 * version in its transaction (whose row lock also serialises the app's moderation writes), and
 * `changed` is told after the commit.
 */
export class RulesService {
  constructor(
    private readonly deps: {
      rules: ModerationRulesRepository;
      lists: KeywordListsRepository;
      setup: Pick<ModerationSetupRepository, 'read'>;
      /** Each change moves the app's moderation version, and is told after its commit. */
      changes: SetupChanges;
    },
  ) {}

  async create(ctx: RequestContext, input: RuleInput): Promise<RuleView> {
    const appId = ctx.appId;
    const id = input.id;
    try {
      const rule = await this.deps.changes.run(ctx, 'create_moderation_rule', async (tx) => {
        const details: ErrorDetails = {};
        const rule = readRule(input, await this.listLookup(appId, tx), details);
        if (Object.keys(details).length > 0) throw badRequest(details);
        const { rows, deleted } = await this.deps.rules.list(appId, tx);
        const builtin = BUILTIN_RULE_BY_ID.has(id) && !deleted.has(id);
        if (builtin || rows.some((row) => row.id === id)) throw ruleExists(id);
        const own = rows.filter((row) => !overridesBuiltin(BUILTIN_RULE_BY_ID, row.id, deleted)).length;
        if (own >= MODERATION_LIMITS.rulesPerApp) {
          throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: MODERATION_LIMITS.rulesPerApp, what: 'moderation rules per app' } });
        }
        const now = new Date();
        rule.createdAt = toUnix(now);
        rule.updatedAt = rule.createdAt;
        checkSetupBudget(await this.effective(appId, tx), { rule });
        await this.write(appId, rule, { createdAt: now, updatedAt: now, replace: false }, tx);
        return rule;
      });
      return ruleView(appId, rule);
    } catch (error) {
      if (error instanceof UniqueViolation) throw ruleExists(id);
      throw error;
    }
  }

  async list(ctx: RequestContext, page: ModerationPage): Promise<ModerationList<RuleView>> {
    const { rows, deleted } = await this.deps.rules.list(ctx.appId);
    const rules = effectiveRules(rows.map(ruleFromRow), deleted);
    return pageOfList(
      rules.map((rule) => ruleView(ctx.appId, rule)),
      page,
    );
  }

  async get(ctx: RequestContext, id: string): Promise<RuleView> {
    return ruleView(ctx.appId, await this.current(ctx.appId, id));
  }

  async update(ctx: RequestContext, id: string, input: RuleUpdateInput): Promise<RuleView> {
    const appId = ctx.appId;
    if (input.id !== undefined && input.id !== id) throw badRequest({ id: `must be the rule's id (${id}) when given: a rule's id does not change` });
    try {
      const rule = await this.deps.changes.run(ctx, 'update_moderation_rule', async (tx) => {
        const current = await this.current(appId, id, tx);
        const details: ErrorDetails = {};
        const lookup = input.conditions ? await this.listLookup(appId, tx) : () => undefined;
        const next: ModerationRule = {
          id,
          name: input.name ?? current.name,
          enabled: input.enabled ?? current.enabled,
          conditions: input.conditions ? readConditions(input.conditions, lookup, details) : current.conditions,
          action: input.action !== undefined ? readActions(input.action, details) : current.action,
          revision: current.revision + 1,
          createdAt: current.createdAt,
          updatedAt: current.updatedAt,
        };
        if (input.filters?.length) details.filters = FILTERS_REFUSED;
        if (Object.keys(details).length > 0) throw badRequest(details);
        const description = input.description ?? current.description;
        if (description !== undefined) next.description = description;
        if (sameRule(current, next)) throw new Unchanged(current);
        const now = new Date();
        next.updatedAt = toUnix(now);
        checkSetupBudget(await this.effective(appId, tx), { rule: next });
        await this.write(appId, next, { createdAt: new Date(current.createdAt * 1000), updatedAt: now, replace: true }, tx);
        if (current.default) next.default = true;
        return next;
      });
      return ruleView(appId, rule);
    } catch (error) {
      if (error instanceof Unchanged) return ruleView(appId, error.rule);
      throw error;
    }
  }

  /** Deletes the app's rule with its revisions; a built-in rule is no longer listed nor applied. */
  async delete(ctx: RequestContext, id: string): Promise<{ success: true; message: string }> {
    const appId = ctx.appId;
    await this.deps.changes.run(ctx, 'delete_moderation_rule', async (tx) => {
      const { row, deleted } = await this.deps.rules.get(appId, id, tx);
      const builtin = overridesBuiltin(BUILTIN_RULE_BY_ID, id, deleted);
      if (!row && !builtin) throw ruleNotFound(id);
      if (row) await this.deps.rules.delete(appId, id, tx);
      if (builtin) await this.deps.rules.tombstone(appId, id, tx);
    });
    return { success: true, message: `Rule with id ${id} has been deleted successfully.` };
  }

  /** The rule's revisions, newest first: the current one `active`; a changed built-in's first is the built-in. */
  async revisions(ctx: RequestContext, id: string, page: ModerationPage): Promise<ModerationList<RuleView>> {
    const appId = ctx.appId;
    const { row, deleted } = await this.deps.rules.get(appId, id);
    const builtin = overridesBuiltin(BUILTIN_RULE_BY_ID, id, deleted) ? BUILTIN_RULE_BY_ID.get(id) : undefined;
    if (!row && !builtin) throw ruleNotFound(id);
    const offset = (page.page - 1) * page.limit;
    const revisions = row ? (await this.deps.rules.revisions(appId, id, { offset, limit: page.limit })).map(ruleFromRevision) : [];
    // The built-in's revision comes after every row: on this page when the rows end within it.
    if (builtin && revisions.length < page.limit) {
      const rowsBefore = row ? (revisions.length > 0 || offset === 0 ? offset + revisions.length : await this.deps.rules.countRevisions(appId, id)) : 0;
      if (rowsBefore >= offset && rowsBefore < offset + page.limit) revisions.push(builtin);
    }
    const current = row ? row.revision : 1;
    const data = revisions.map((revision) => {
      const view = ruleView(appId, revision, revision.revision === current);
      if (builtin) view.default = true;
      return view;
    });
    return { data, meta: { current: { limit: page.limit, count: data.length } } };
  }

  /**
   * The app's effective rules (built-ins not deleted, its rows in place of the built-ins they
   * change) and lists, with the version they are at: one statement, so one snapshot.
   */
  async setup(ctx: RequestContext): Promise<ModerationSetup> {
    return this.effective(ctx.appId);
  }

  private async effective(appId: string, tx?: Tx): Promise<ModerationSetup> {
    return effectiveSetup(await this.deps.setup.read(appId, tx));
  }

  /** The app's rule `id` as it is now (its row, or the built-in), or ERR_RULE_NOT_FOUND. */
  private async current(appId: string, id: string, tx?: Tx): Promise<ModerationRule> {
    const { row, deleted } = await this.deps.rules.get(appId, id, tx);
    return currentRule(id, row, deleted) ?? throwNotFound(id);
  }

  /** Which keyword lists the app has (built-in or own), by id: what a condition may reference. */
  private async listLookup(appId: string, tx: Tx): Promise<ListLookup> {
    const { rows, deleted } = await this.deps.lists.summaries(appId, tx);
    const own = new Map(rows.map((row) => [row.id, row.category]));
    return (id) => own.get(id) ?? (deleted.has(id) ? undefined : BUILTIN_LIST_BY_ID.get(id)?.category);
  }

  private async write(appId: string, rule: ModerationRule, at: { createdAt: Date; updatedAt: Date; replace: boolean }, tx: Tx): Promise<void> {
    const revision: ModerationRule = {
      id: rule.id,
      name: rule.name,
      enabled: rule.enabled,
      conditions: rule.conditions,
      action: rule.action,
      revision: rule.revision,
      createdAt: rule.createdAt,
      updatedAt: rule.updatedAt,
    };
    if (rule.description !== undefined) revision.description = rule.description;
    await this.deps.rules.save(
      appId,
      {
        id: rule.id,
        revision: rule.revision,
        name: rule.name,
        description: rule.description ?? null,
        enabled: rule.enabled,
        conditionsJson: JSON.stringify(rule.conditions),
        actionJson: JSON.stringify(rule.action),
        createdAt: at.createdAt,
        updatedAt: at.updatedAt,
        revisionJson: JSON.stringify(revision),
      },
      { replace: at.replace },
      tx,
    );
  }
}

const FILTERS_REFUSED = 'are not supported: a rule applies to every message of the app';

/** The effective rules and lists of a stored set-up: built-ins not deleted, the app's rows in place of those they change. */
export function effectiveSetup(stored: StoredSetup): ModerationSetup {
  return {
    version: stored.version,
    rules: effectiveRules(stored.rules.map(ruleFromRow), stored.deletedRules),
    lists: effectiveLists(stored.lists.map(listFromRow), stored.deletedLists),
  };
}

/** A new rule as the input describes it (revision 1; its times are set when it is written). */
function readRule(input: RuleInput, lists: ListLookup, details: ErrorDetails): ModerationRule {
  const rule: ModerationRule = {
    id: input.id,
    name: input.name,
    enabled: input.enabled ?? true,
    conditions: readConditions(input.conditions, lists, details),
    action: readActions(input.action, details),
    revision: 1,
    createdAt: 0,
    updatedAt: 0,
  };
  if (input.description !== undefined) rule.description = input.description;
  if (input.filters?.length) details.filters = FILTERS_REFUSED;
  return rule;
}

/** The rule from its row (the app's version of a built-in marked `default`), or the built-in, or none. */
export function currentRule(id: string, row: RuleRow | undefined, deleted: boolean): ModerationRule | undefined {
  if (row) {
    const rule = ruleFromRow(row);
    if (overridesBuiltin(BUILTIN_RULE_BY_ID, id, deleted)) rule.default = true;
    return rule;
  }
  return deleted ? undefined : BUILTIN_RULE_BY_ID.get(id);
}

function sameRule(a: ModerationRule, b: ModerationRule): boolean {
  return a.name === b.name && a.description === b.description && a.enabled === b.enabled && sameStrings(a.action, b.action) && sameConditions(a.conditions, b.conditions);
}

function ruleNotFound(id: string): AppError {
  return new AppError('ERR_RULE_NOT_FOUND', { params: { id } });
}

function throwNotFound(id: string): never {
  throw ruleNotFound(id);
}

function ruleExists(id: string): AppError {
  return new AppError('ERR_RULE_ALREADY_EXISTS', { params: { id } });
}
