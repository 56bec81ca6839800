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

/** A rule's revision as the vendor names it: `<appId>_<ruleId>_<revision>`. */
export function revisionId(appId: string, id: string, revision: number): string {
  return `${appId}_${id}_${revision}`;
}
