import { AppError } from '../errors.js';

/**
 * Moderation rules and keyword lists as the API shows them (docs/moderation.md), written as
 * the vendor's examples write them: a rule has conditions (any one matching makes the rule
 * match) and actions; a condition reads one part of a message (`operand`), in one way
 * (`category`), with an `operator`, against its `value` (inline terms, or the ids of keyword
 * lists when `isKeywordsReferencePresent`).
 */

/** The bounds of an app's moderation set-up. */
export const MODERATION_LIMITS = {
  /** The app's own rules (its built-in rules are not counted). */
  rulesPerApp: 25,
  /** The app's own keyword lists (built-in lists not counted). */
  listsPerApp: 25,
  conditionsPerRule: 10,
  /** Inline terms (or list ids) of one condition. */
  valuesPerCondition: 1_000,
  /** Rule, list and reason ids: letters, digits, `-` and `_`. */
  idLength: 100,
  nameLength: 100,
  descriptionLength: 255,
  /** One keyword, or one pattern of a pattern list or condition. */
  termLength: 100,
  patternLength: 1_000,
  termsPerList: 100_000,
  /** Every keyword of the app's lists together: what one compiled matcher holds. */
  termsPerApp: 200_000,
  /**
   * The characters of every pattern of the app (its rules' inline patterns and its pattern
   * lists' terms): what its patterns cost each message is bounded through it. Patterns are
   * matched one compiled program per ~4 KB of them: 1,000 patterns of 1,000 characters took
   * ~6 ms a message and 230 MB to compile; 32 KB of them take a fraction of a millisecond.
   */
  patternCharsPerApp: 32_768,
  /**
   * The inline values of all the app's rules together (words beside those of its lists): with
   * termsPerApp, what its automaton holds and what compiling it costs (~0.25 s for 100,000).
   */
  inlineValuesPerApp: 10_000,
  /** A keyword list's CSV file, or its JSON body. */
  listBytes: 4 * 1024 * 1024,
  reasonsPerApp: 100,
  remarkLength: 1_000,
} as const;

/** Ids of rules, lists and reasons. */
export const MODERATION_ID_PATTERN = '^[A-Za-z0-9_-]{1,100}$';

/** What a matching rule does; an action Parley does not carry out is refused when a rule is written. */
export const RULE_ACTIONS = ['blockMessage', 'dropMessage'] as const;
export type RuleAction = (typeof RULE_ACTIONS)[number];

export const CONDITION_OPERATORS = ['contains', 'equals'] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

/** The parts of a message a condition may read (the vendor's operands). */
export const CONDITION_OPERANDS = ['text', 'custom', 'image', 'video', 'audio', 'file'] as const;
export type ConditionOperand = (typeof CONDITION_OPERANDS)[number];

/** How a condition reads its operand: the vendor's categories (the last ones need a model). */
export const CONDITION_CATEGORIES = ['word', 'pattern', 'sentence', 'ai', 'custom-api'] as const;
export type ConditionCategory = (typeof CONDITION_CATEGORIES)[number];

/** A rule's condition, as stored and shown. */
export interface RuleCondition {
  id: number;
  /** Always `message`: what the condition is about. */
  entity: 'message';
  operand: ConditionOperand;
  category: ConditionCategory;
  operator: ConditionOperator;
  /** Inline terms or patterns; with isKeywordsReferencePresent, the ids of keyword lists. */
  value: string[];
  isKeywordsReferencePresent: boolean;
  isMediaPresent: boolean;
  /** The vendor's notes shown with a condition (kept as given). */
  message?: string[];
  weight?: number;
}

/** A rule, as stored (its times and revision beside it). */
export interface ModerationRule {
  id: string;
  name: string;
  description?: string;
  enabled: boolean;
  conditions: RuleCondition[];
  action: RuleAction[];
  revision: number;
  createdAt: number;
  updatedAt: number;
  /** A built-in rule (domain/moderation/defaults.ts). */
  default?: boolean;
}

/** A keyword list: words (whole-word matches) or patterns. */
export interface KeywordList {
  id: string;
  name: string;
  description?: string;
  category: 'word' | 'pattern';
  isCSV: boolean;
  searchTerms: string[];
  revision: number;
  createdAt: number;
  updatedAt: number;
  default?: boolean;
}

/** Whether Parley evaluates a condition on the messages it reads, and if not, why. */
export type ConditionEvaluation = { evaluated: true } | { evaluated: false; reason: string };

/**
 * Which conditions Parley evaluates itself: words and patterns in a message's text (`text`) or
 * in a custom message's data (`custom`). Images, video, audio, files, sentences and AI
 * categories need a model: they are stored and shown with `evaluated: false`, never block, and
 * go to the app's moderation hook when it has one.
 */
export function conditionEvaluation(condition: Pick<RuleCondition, 'operand' | 'category'>): ConditionEvaluation {
  const readable = condition.operand === 'text' || condition.operand === 'custom';
  if (!readable) return { evaluated: false, reason: `a model is needed to read ${condition.operand} content: ask the moderation hook (docs/moderation.md)` };
  if (condition.category !== 'word' && condition.category !== 'pattern') {
    return { evaluated: false, reason: `the ${condition.category} category needs a model: ask the moderation hook (docs/moderation.md)` };
  }
  return { evaluated: true };
}

/** The characters of every pattern the rules (inline) and pattern lists hold (MODERATION_LIMITS.patternCharsPerApp). */
export function patternChars(rules: readonly ModerationRule[], lists: readonly KeywordList[]): number {
  let chars = 0;
  for (const rule of rules) {
    for (const condition of rule.conditions) {
      if (condition.category === 'pattern' && !condition.isKeywordsReferencePresent) for (const value of condition.value) chars += value.length;
    }
  }
  for (const list of lists) if (list.category === 'pattern') for (const term of list.searchTerms) chars += term.length;
  return chars;
}

/**
 * The app's rules and lists after a change (`rule` or `list` in place of the one of its id, or
 * added) within the budget of what compiling and matching them may cost: the patterns'
 * characters (patternCharsPerApp) and the rules' inline values (inlineValuesPerApp); else
 * ERR_PLAN_QUOTA_RESTRICTION.
 */
export function checkSetupBudget(setup: { rules: readonly ModerationRule[]; lists: readonly KeywordList[] }, change: { rule?: ModerationRule; list?: KeywordList }): void {
  const rules = change.rule ? [...setup.rules.filter((rule) => rule.id !== change.rule!.id), change.rule] : setup.rules;
  const lists = change.list ? [...setup.lists.filter((list) => list.id !== change.list!.id), change.list] : setup.lists;
  const refuse = (limit: number, what: string) => new AppError('ERR_PLAN_QUOTA_RESTRICTION', { params: { limit, what } });
  if (patternChars(rules, lists) > MODERATION_LIMITS.patternCharsPerApp) {
    throw refuse(MODERATION_LIMITS.patternCharsPerApp, 'characters of patterns in the rules and keyword lists of an app');
  }
  let inline = 0;
  for (const rule of rules) for (const condition of rule.conditions) if (!condition.isKeywordsReferencePresent) inline += condition.value.length;
  if (inline > MODERATION_LIMITS.inlineValuesPerApp) throw refuse(MODERATION_LIMITS.inlineValuesPerApp, 'values written in the rules of an app (put more in keyword lists)');
}

/** A rule's revision as the vendor names it: `<appId>_<ruleId>_<revision>`. */
export function revisionId(appId: string, id: string, revision: number): string {
  return `${appId}_${id}_${revision}`;
}
