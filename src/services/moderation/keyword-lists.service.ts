import { UniqueViolation } from '../../db/driver-errors.js';
import type { Tx } from '../../db/transaction.js';
import type { SetupChanges } from './setup-changes.js';
import type { RequestContext } from '../../domain/context.js';
import { AppError, badRequest, type ErrorDetails } from '../../domain/errors.js';
import { csvCells, decodeUtf8 } from '../../domain/moderation/csv.js';
import { BUILTIN_LIST_BY_ID, BUILTIN_LISTS, effectiveLists, effectiveRules, overridesBuiltin } from '../../domain/moderation/defaults.js';
import { patternProblem } from '../../domain/moderation/patterns.js';
import { checkSetupBudget, MODERATION_LIMITS, type KeywordList } from '../../domain/moderation/rules.js';
import { unstorableText } from '../../domain/text.js';
import { toUnix } from '../../domain/time.js';
import type { KeywordListsRepository } from '../../repositories/moderation/keyword-lists.repository.js';
import type { ModerationRulesRepository } from '../../repositories/moderation/rules.repository.js';
import type { ModerationSetupRepository } from '../../repositories/moderation/setup.repository.js';
import { effectiveSetup, pageOfList, type ModerationList, type ModerationPage } from './rules.service.js';
import { sameStrings } from './rule-input.js';
import { listFromRow, listView, ruleFromRow, type KeywordListView } from './views.js';

export type ListCategory = 'word' | 'pattern';

/** A keyword list as written: JSON, or a form whose terms come as text or a CSV file. */
export interface KeywordListInput {
  id?: string;
  name?: string;
  description?: string;
  category?: ListCategory;
  /** The terms: a list, or comma-separated text (read as CSV). */
  searchTerms?: string[] | string;
  /** A CSV file's bytes: every non-empty cell of every row is a term. */
  file?: Uint8Array;
}

/** Thrown inside an update's transaction when it changes nothing, so that the version is not moved. */
class Unchanged extends Error {
  constructor(readonly list: KeywordList) {
    super('unchanged');
  }
}

/**
 * Keyword lists that rules' conditions reference (docs/compatibility.md, "Moderation rules and
 * keyword lists"): the app's own and the built-in ones. Like rules, every change moves the app's
 * moderation version in its transaction and tells `changed` after the commit.
 */
export class KeywordListsService {
  constructor(
    private readonly deps: {
      lists: KeywordListsRepository;
      rules: ModerationRulesRepository;
      setup: Pick<ModerationSetupRepository, 'read'>;
      /** Each change moves the app's moderation version, and is told after its commit. */
      changes: SetupChanges;
    },
  ) {}

  async create(ctx: RequestContext, input: KeywordListInput): Promise<KeywordListView> {
    const appId = ctx.appId;
    const details: ErrorDetails = {};
    if (input.id === undefined) details.id = 'is required';
    if (input.name === undefined) details.name = 'is required';
    const category = input.category ?? 'word';
    const terms = readTerms(input, category, details);
    if (input.file === undefined && input.searchTerms === undefined) details.searchTerms = 'is required: send searchTerms, or a CSV file in the part "file"';
    if (Object.keys(details).length > 0 || !terms) throw badRequest(details);
    const id = input.id!;
    try {
      const list = await this.deps.changes.run(ctx, 'create_keyword_list', async (tx) => {
        const { rows, deleted } = await this.deps.lists.summaries(appId, tx);
        if ((BUILTIN_LIST_BY_ID.has(id) && !deleted.has(id)) || rows.some((row) => row.id === id)) throw listExists(id);
        const own = rows.filter((row) => !overridesBuiltin(BUILTIN_LIST_BY_ID, row.id, deleted)).length;
        if (own >= MODERATION_LIMITS.listsPerApp) {
          throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: MODERATION_LIMITS.listsPerApp, what: 'keyword lists per app' } });
        }
        checkTermsPerApp(termsBeside(rows, deleted, id) + terms.terms.length);
        const now = new Date();
        const list: KeywordList = {
          id,
          name: input.name!,
          category,
          isCSV: terms.isCsv,
          searchTerms: terms.terms,
          revision: 1,
          createdAt: toUnix(now),
          updatedAt: toUnix(now),
        };
        if (input.description !== undefined) list.description = input.description;
        if (list.category === 'pattern') checkSetupBudget(effectiveSetup(await this.deps.setup.read(appId, tx)), { list });
        await this.write(appId, list, { createdAt: now, updatedAt: now, replace: false }, tx);
        return list;
      });
      return listView(appId, list);
    } catch (error) {
      if (error instanceof UniqueViolation) throw listExists(id);
      throw error;
    }
  }

  async list(ctx: RequestContext, page: ModerationPage): Promise<ModerationList<KeywordListView>> {
    const { rows, deleted } = await this.deps.lists.list(ctx.appId);
    const lists = effectiveLists(rows.map(listFromRow), deleted);
    return pageOfList(
      lists.map((list) => listView(ctx.appId, list)),
      page,
    );
  }

  async get(ctx: RequestContext, id: string): Promise<KeywordListView> {
    return listView(ctx.appId, await this.current(ctx.appId, id));
  }

  async update(ctx: RequestContext, id: string, input: KeywordListInput): Promise<KeywordListView> {
    const appId = ctx.appId;
    if (input.id !== undefined && input.id !== id) throw badRequest({ id: `must be the list's id (${id}) when given: a list's id does not change` });
    try {
      const list = await this.deps.changes.run(ctx, 'update_keyword_list', async (tx) => {
        const current = await this.current(appId, id, tx);
        const category = input.category ?? current.category;
        const details: ErrorDetails = {};
        const given = readTerms(input, category, details);
        // A list that becomes a pattern list: its terms must be patterns.
        const terms = given ?? (category === current.category ? undefined : checkedTerms(current.searchTerms, category, 'category', details));
        if (Object.keys(details).length > 0) throw badRequest(details);
        const next: KeywordList = {
          id,
          name: input.name ?? current.name,
          category,
          isCSV: given ? given.isCsv : current.isCSV,
          searchTerms: terms ? terms.terms : current.searchTerms,
          revision: current.revision + 1,
          createdAt: current.createdAt,
          updatedAt: current.updatedAt,
        };
        const description = input.description ?? current.description;
        if (description !== undefined) next.description = description;
        if (sameList(current, next)) throw new Unchanged(current);
        if (category !== current.category) {
          const users = await this.usersOf(appId, id, tx);
          if (users.length > 0) throw inUse(id, users);
        }
        if (terms) {
          const { rows, deleted } = await this.deps.lists.summaries(appId, tx);
          checkTermsPerApp(termsBeside(rows, deleted, id) + next.searchTerms.length);
        }
        const now = new Date();
        next.updatedAt = toUnix(now);
        if (next.category === 'pattern') checkSetupBudget(effectiveSetup(await this.deps.setup.read(appId, tx)), { list: next });
        await this.write(appId, next, { createdAt: new Date(current.createdAt * 1000), updatedAt: now, replace: true }, tx);
        if (current.default) next.default = true;
        return next;
      });
      return listView(appId, list);
    } catch (error) {
      if (error instanceof Unchanged) return listView(appId, error.list);
      throw error;
    }
  }

  /** Deletes a list no rule references; a built-in list is no longer listed nor referenced. */
  async delete(ctx: RequestContext, id: string): Promise<{ success: true; message: string }> {
    const appId = ctx.appId;
    await this.deps.changes.run(ctx, 'delete_keyword_list', async (tx) => {
      const { row, deleted } = await this.deps.lists.get(appId, id, tx);
      const builtin = overridesBuiltin(BUILTIN_LIST_BY_ID, id, deleted);
      if (!row && !builtin) throw listNotFound(id);
      const users = await this.usersOf(appId, id, tx);
      if (users.length > 0) throw inUse(id, users);
      if (row) await this.deps.lists.delete(appId, id, tx);
      if (builtin) await this.deps.lists.tombstone(appId, id, tx);
    });
    return { success: true, message: `Keyword with id ${id} has been deleted successfully.` };
  }

  /** The ids of the app's rules (built-in ones included) whose conditions reference the list. */
  private async usersOf(appId: string, id: string, tx: Tx): Promise<string[]> {
    const { rows, deleted } = await this.deps.rules.list(appId, tx);
    return effectiveRules(rows.map(ruleFromRow), deleted)
      .filter((rule) => rule.conditions.some((condition) => condition.isKeywordsReferencePresent && condition.value.includes(id)))
      .map((rule) => rule.id)
      .sort();
  }

  private async current(appId: string, id: string, tx?: Tx): Promise<KeywordList> {
    const { row, deleted } = await this.deps.lists.get(appId, id, tx);
    if (row) {
      const list = listFromRow(row);
      if (overridesBuiltin(BUILTIN_LIST_BY_ID, id, deleted)) list.default = true;
      return list;
    }
    const builtin = deleted ? undefined : BUILTIN_LIST_BY_ID.get(id);
    if (!builtin) throw listNotFound(id);
    return builtin;
  }

  private async write(appId: string, list: KeywordList, at: { createdAt: Date; updatedAt: Date; replace: boolean }, tx: Tx): Promise<void> {
    await this.deps.lists.save(
      appId,
      {
        id: list.id,
        revision: list.revision,
        name: list.name,
        description: list.description ?? null,
        category: list.category,
        isCsv: list.isCSV,
        searchTerms: list.searchTerms,
        createdAt: at.createdAt,
        updatedAt: at.updatedAt,
      },
      { replace: at.replace },
      tx,
    );
  }
}

/**
 * The terms the input gives (from its file, or its searchTerms), checked; undefined when it
 * gives none, or when they have problems (added to `details`).
 */
function readTerms(input: KeywordListInput, category: ListCategory, details: ErrorDetails): { terms: string[]; isCsv: boolean } | undefined {
  if (input.file !== undefined && input.searchTerms !== undefined) {
    details.file = 'cannot come with searchTerms: send the terms either as a CSV file or in searchTerms';
    return undefined;
  }
  if (input.file !== undefined) {
    const text = decodeUtf8(input.file);
    const problem = text === undefined ? 'is not UTF-8 text' : unstorableText(text);
    if (problem || text === undefined) {
      details.file = problem ?? 'is not UTF-8 text';
      return undefined;
    }
    const cells = csvCells(text);
    if (!cells.ok) {
      details.file = `is not valid CSV: line ${cells.line}: ${cells.problem}`;
      return undefined;
    }
    const terms = checkedTerms(cells.cells, category, 'file', details);
    return terms && { terms: terms.terms, isCsv: true };
  }
  if (input.searchTerms === undefined) return undefined;
  let raw: string[];
  if (typeof input.searchTerms === 'string') {
    const cells = csvCells(input.searchTerms);
    if (!cells.ok) {
      details.searchTerms = `is not valid comma-separated text: line ${cells.line}: ${cells.problem}`;
      return undefined;
    }
    raw = cells.cells;
  } else raw = input.searchTerms;
  const terms = checkedTerms(raw, category, 'searchTerms', details);
  return terms && { terms: terms.terms, isCsv: false };
}

/**
 * Terms trimmed, empty ones dropped, repeats dropped (the first kept; words compared in lower
 * case, patterns as written), their number and each one checked.
 */
function checkedTerms(raw: readonly string[], category: ListCategory, field: string, details: ErrorDetails): { terms: string[] } | undefined {
  const { termsPerList, termLength } = MODERATION_LIMITS;
  const seen = new Set<string>();
  const terms: string[] = [];
  for (const item of raw) {
    const term = item.trim();
    if (term === '') continue;
    const key = category === 'word' ? term.toLowerCase() : term;
    if (seen.has(key)) continue;
    seen.add(key);
    terms.push(term);
  }
  if (terms.length === 0 || terms.length > termsPerList) {
    details[field] = `must hold 1 to ${termsPerList} terms (it holds ${terms.length} once empty and repeated ones are left out)`;
    return undefined;
  }
  for (const term of terms) {
    const problem = category === 'pattern' ? patternProblem(term) : term.length > termLength ? `is longer than ${termLength} characters` : undefined;
    if (problem) {
      details[field] = `holds a term that ${problem}: ${term.slice(0, 50)}${term.length > 50 ? '…' : ''}`;
      return undefined;
    }
  }
  return { terms };
}

/** The terms of the app's effective lists but the list `id`. */
function termsBeside(rows: ReadonlyArray<{ id: string; terms: number }>, deleted: ReadonlySet<string>, id: string): number {
  let total = 0;
  for (const row of rows) if (row.id !== id) total += row.terms;
  for (const builtin of BUILTIN_LISTS) {
    if (builtin.id !== id && !deleted.has(builtin.id) && !rows.some((row) => row.id === builtin.id)) total += builtin.searchTerms.length;
  }
  return total;
}

function checkTermsPerApp(total: number): void {
  if (total > MODERATION_LIMITS.termsPerApp) {
    throw new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit: MODERATION_LIMITS.termsPerApp, what: 'keywords in the keyword lists of an app' } });
  }
}

function sameList(a: KeywordList, b: KeywordList): boolean {
  return a.name === b.name && a.description === b.description && a.category === b.category && a.isCSV === b.isCSV && sameStrings(a.searchTerms, b.searchTerms);
}

function listNotFound(id: string): AppError {
  return new AppError('ERR_KEYWORD_NOT_FOUND', { params: { id } });
}

function listExists(id: string): AppError {
  return new AppError('ERR_KEYWORD_ALREADY_EXISTS', { params: { id } });
}

function inUse(id: string, rules: string[]): AppError {
  return new AppError('ERR_KEYWORD_IN_USE', { params: { id, rules: rules.join(', ') } });
}
