/**
 * The rules and keyword lists every app has without creating them: written here, not in the
 * database, until the app changes one (an update writes the app's own row, revision 2 on, and
 * from then on the row is the rule) or deletes one (a tombstone in moderation_deleted_defaults).
 * Every built-in rule is off until the app enables it. Names, descriptions and times follow the
 * vendor's defaults as its list-rules example shows them.
 */
import { EMAIL_PATTERN, LINK_PATTERN, PHONE_PATTERN, PROFANITY_WORDS } from './builtins.js';
import type { ConditionOperand, KeywordList, ModerationRule, RuleCondition } from './rules.js';

export const PROFANITY_LIST_ID = 'profanity-list';

function condition(id: number, operand: ConditionOperand, category: 'word' | 'pattern', value: string, reference: boolean): RuleCondition {
  return {
    id,
    entity: 'message',
    operand,
    category,
    operator: 'contains',
    value: [value],
    isKeywordsReferencePresent: reference,
    isMediaPresent: operand !== 'text' && operand !== 'custom',
  };
}

function builtinRule(id: string, name: string, description: string, createdAt: number, conditions: RuleCondition[]): ModerationRule {
  return { id, name, description, enabled: false, conditions, action: ['blockMessage'], revision: 1, createdAt, updatedAt: createdAt, default: true };
}

/** A pattern read in text messages and in custom messages' data: two conditions. */
const textAndCustom = (pattern: string) => [condition(1, 'text', 'pattern', pattern, false), condition(2, 'custom', 'pattern', pattern, false)];

export const BUILTIN_RULES: readonly ModerationRule[] = [
  builtinRule('text-profanity-filter', 'Text Profanity filter', 'Detect and block profanity in text messages.', 1718355386, [condition(1, 'text', 'word', PROFANITY_LIST_ID, true)]),
  builtinRule('image-moderation', 'AI Image Moderation', 'AI-powered image moderation to detect unsafe content.', 1718350200, [condition(1, 'image', 'word', 'AnyOf_greaterThan_30', false)]),
  builtinRule('video-moderation', 'AI Video Moderation', 'AI-powered video moderation to detect unsafe content.', 1718350199, [condition(1, 'video', 'word', 'AnyOf_greaterThan_30', false)]),
  builtinRule('custom-profanity-filter', 'Custom Profanity filter', 'Detect and block profanity in custom messages.', 1718341200, [condition(1, 'custom', 'word', PROFANITY_LIST_ID, true)]),
  builtinRule('contact_details_filter', 'Contact details filter', 'Identifies phone numbers in messages.', 1718186338, textAndCustom(PHONE_PATTERN)),
  builtinRule('email_filter', 'Email filter', 'Identifies email addresses in messages.', 1718099938, textAndCustom(EMAIL_PATTERN)),
  builtinRule('link_filter', 'Link filter', 'Identifies links in messages.', 1718099900, textAndCustom(LINK_PATTERN)),
];

export const BUILTIN_LISTS: readonly KeywordList[] = [
  {
    id: PROFANITY_LIST_ID,
    name: 'Profane Words',
    category: 'word',
    isCSV: false,
    searchTerms: [...PROFANITY_WORDS],
    revision: 1,
    createdAt: 1718354412,
    updatedAt: 1718354412,
    default: true,
  },
];

export const BUILTIN_RULE_BY_ID: ReadonlyMap<string, ModerationRule> = new Map(BUILTIN_RULES.map((rule) => [rule.id, rule]));
export const BUILTIN_LIST_BY_ID: ReadonlyMap<string, KeywordList> = new Map(BUILTIN_LISTS.map((list) => [list.id, list]));

/**
 * Whether the app's row of this id is its version of a built-in (changed, not deleted): a row
 * whose id is a built-in's and for which no tombstone exists (`deleted`: the app's tombstones, or
 * whether this id has one). A row written after the built-in
 * was deleted is the app's own rule, which merely shares the id.
 */
export function overridesBuiltin(builtins: ReadonlyMap<string, unknown>, id: string, deleted: ReadonlySet<string> | boolean): boolean {
  return builtins.has(id) && !(typeof deleted === 'boolean' ? deleted : deleted.has(id));
}

/** Newest first (createdAt descending), then by id: the order of the lists, as the vendor's examples show. */
export function byNewest(a: { id: string; createdAt: number }, b: { id: string; createdAt: number }): number {
  return b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * The app's effective rules or lists: its rows (those that override a built-in marked `default`),
 * and the built-ins it has neither changed nor deleted, newest first.
 */
function effective<T extends { id: string; createdAt: number; default?: boolean }>(
  builtins: readonly T[],
  byId: ReadonlyMap<string, T>,
  rows: readonly T[],
  deleted: ReadonlySet<string>,
  asDefault: (item: T) => T,
): T[] {
  const own = new Set(rows.map((row) => row.id));
  const result = rows.map((row) => (overridesBuiltin(byId, row.id, deleted) ? asDefault(row) : row));
  for (const builtin of builtins) if (!own.has(builtin.id) && !deleted.has(builtin.id)) result.push(builtin);
  return result.sort(byNewest);
}

export function effectiveRules(rows: readonly ModerationRule[], deleted: ReadonlySet<string>): ModerationRule[] {
  return effective(BUILTIN_RULES, BUILTIN_RULE_BY_ID, rows, deleted, markDefault);
}

export function effectiveLists(rows: readonly KeywordList[], deleted: ReadonlySet<string>): KeywordList[] {
  return effective(BUILTIN_LISTS, BUILTIN_LIST_BY_ID, rows, deleted, markDefault);
}

function markDefault<T extends { default?: boolean }>(item: T): T {
  item.default = true;
  return item;
}
