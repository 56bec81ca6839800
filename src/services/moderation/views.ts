/**
 * Moderation rules and keyword lists: from their rows to the domain's shapes
 * (domain/moderation/rules.ts), and from those to the objects the API answers, as the vendor's
 * examples write them.
 */
import { conditionEvaluation, revisionId, type KeywordList, type ModerationRule, type RuleAction, type RuleCondition } from '../../domain/moderation/rules.js';
import { toUnix } from '../../domain/time.js';
import type { KeywordListRow } from '../../repositories/moderation/keyword-lists.repository.js';
import type { RuleRevisionRow, RuleRow } from '../../repositories/moderation/rules.repository.js';

export interface ConditionView {
  id: number;
  isKeywordsReferencePresent: boolean;
  isMediaPresent: boolean;
  entity: 'message';
  operand: string;
  category: string;
  operator: string;
  value: string[];
  message?: string[];
  /** Whether Parley evaluates the condition itself; when not, why (see conditionEvaluation). */
  evaluated: boolean;
  reason?: string;
}

export interface RuleView {
  id: string;
  name: string;
  description?: string;
  enabled: boolean;
  conditions: ConditionView[];
  action: RuleAction[];
  /** True for a rule as it is; false for the superseded revisions of list-rule-revisions. */
  active: boolean;
  createdAt: number;
  updatedAt: number;
  revisionId: string;
  default?: true;
}

export interface KeywordListView {
  id: string;
  name: string;
  description?: string;
  category: 'word' | 'pattern';
  isCSV: boolean;
  searchTerms: string[];
  createdAt: number;
  updatedAt: number;
  revisionId: string;
  active: true;
  default?: true;
}

export function ruleFromRow(row: RuleRow): ModerationRule {
  const rule: ModerationRule = {
    id: row.id,
    name: row.name,
    enabled: row.enabled,
    conditions: row.conditions as RuleCondition[],
    action: row.action as RuleAction[],
    revision: row.revision,
    createdAt: toUnix(row.created_at),
    updatedAt: toUnix(row.updated_at),
  };
  if (row.description !== null) rule.description = row.description;
  return rule;
}

/** A revision as it was written (the whole rule, see RulesService). */
export function ruleFromRevision(row: RuleRevisionRow): ModerationRule {
  return row.rule as ModerationRule;
}

export function listFromRow(row: KeywordListRow): KeywordList {
  const list: KeywordList = {
    id: row.id,
    name: row.name,
    category: row.category,
    isCSV: row.is_csv,
    searchTerms: row.search_terms,
    revision: row.revision,
    createdAt: toUnix(row.created_at),
    updatedAt: toUnix(row.updated_at),
  };
  if (row.description !== null) list.description = row.description;
  return list;
}

export function conditionView(condition: RuleCondition): ConditionView {
  const view: ConditionView = {
    id: condition.id,
    isKeywordsReferencePresent: condition.isKeywordsReferencePresent,
    isMediaPresent: condition.isMediaPresent,
    entity: 'message',
    operand: condition.operand,
    category: condition.category,
    operator: condition.operator,
    value: condition.value,
    evaluated: true,
  };
  if (condition.message !== undefined) view.message = condition.message;
  const evaluation = conditionEvaluation(condition);
  if (!evaluation.evaluated) {
    view.evaluated = false;
    view.reason = evaluation.reason;
  }
  return view;
}

export function ruleView(appId: string, rule: ModerationRule, active = true): RuleView {
  const view: RuleView = {
    id: rule.id,
    name: rule.name,
    enabled: rule.enabled,
    conditions: rule.conditions.map(conditionView),
    action: rule.action,
    active,
    createdAt: rule.createdAt,
    updatedAt: rule.updatedAt,
    revisionId: revisionId(appId, rule.id, rule.revision),
  };
  if (rule.description !== undefined) view.description = rule.description;
  if (rule.default) view.default = true;
  return view;
}

export function listView(appId: string, list: KeywordList): KeywordListView {
  const view: KeywordListView = {
    id: list.id,
    name: list.name,
    category: list.category,
    isCSV: list.isCSV,
    searchTerms: list.searchTerms,
    createdAt: list.createdAt,
    updatedAt: list.updatedAt,
    revisionId: revisionId(appId, list.id, list.revision),
    active: true,
  };
  if (list.description !== undefined) view.description = list.description;
  if (list.default) view.default = true;
  return view;
}
