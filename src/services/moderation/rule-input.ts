/**
 * A rule as a client writes it, read into the shape Parley stores (domain/moderation/rules.ts):
 * the spellings the vendor's material uses accepted, defaults filled in, and every problem named
 * by its field (`conditions[0].value`). The request schema has checked the types and lengths.
 */
import type { ErrorDetails } from '../../domain/errors.js';
import { patternProblem } from '../../domain/moderation/patterns.js';
import {
  CONDITION_CATEGORIES,
  CONDITION_OPERANDS,
  CONDITION_OPERATORS,
  MODERATION_ID_PATTERN,
  MODERATION_LIMITS,
  RULE_ACTIONS,
  type ConditionCategory,
  type ConditionOperand,
  type ConditionOperator,
  type RuleAction,
  type RuleCondition,
} from '../../domain/moderation/rules.js';

export interface ConditionInput {
  id?: number;
  entity?: string;
  operand: string;
  category: string;
  operator: string;
  value: string | string[];
  /** The flag as the vendor's examples spell it… */
  isKeywordsReferencePresent?: boolean;
  /** …as its schema spells it… */
  isKeywordReferencePresent?: boolean;
  /** …and as one of its examples does. */
  isListReferencePresent?: boolean;
  isMediaPresent?: boolean;
  message?: string | string[];
}

/** How a condition's reference names a list: its category, or undefined when the app has no such list. */
export type ListLookup = (id: string) => 'word' | 'pattern' | undefined;

const ID = new RegExp(MODERATION_ID_PATTERN);

const oneOf = <T extends string>(allowed: readonly T[], value: string): value is T => (allowed as readonly string[]).includes(value);

const asList = (value: string | string[]): string[] => (Array.isArray(value) ? value : [value]);

/** The conditions as stored, numbered; problems are added to `details`. */
export function readConditions(raw: ConditionInput[], lists: ListLookup, details: ErrorDetails): RuleCondition[] {
  const { conditionsPerRule } = MODERATION_LIMITS;
  if (raw.length < 1 || raw.length > conditionsPerRule) {
    details.conditions = `must hold 1 to ${conditionsPerRule} conditions`;
    return [];
  }
  const given = new Map<number, number>();
  raw.forEach((input, i) => {
    if (input.id === undefined) return;
    const first = given.get(input.id);
    if (first !== undefined) details[`conditions[${i}].id`] = `repeats the id of conditions[${first}]`;
    else given.set(input.id, i);
  });
  let next = Math.max(0, ...given.keys());
  return raw.map((input, i) => readCondition(input, input.id ?? ++next, `conditions[${i}]`, lists, details));
}

function readCondition(input: ConditionInput, id: number, field: string, lists: ListLookup, details: ErrorDetails): RuleCondition {
  if (input.entity !== undefined && input.entity !== 'message') details[`${field}.entity`] = 'must be message: conditions read messages';
  if (!oneOf(CONDITION_OPERANDS, input.operand)) details[`${field}.operand`] = `must be one of ${CONDITION_OPERANDS.join(', ')}`;
  if (!oneOf(CONDITION_CATEGORIES, input.category)) details[`${field}.category`] = `must be one of ${CONDITION_CATEGORIES.join(', ')}`;
  if (!oneOf(CONDITION_OPERATORS, input.operator)) details[`${field}.operator`] = `must be one of ${CONDITION_OPERATORS.join(', ')}`;
  const operand = input.operand as ConditionOperand;
  const category = input.category as ConditionCategory;
  const reference = input.isKeywordsReferencePresent ?? input.isKeywordReferencePresent ?? input.isListReferencePresent ?? false;
  const value = readValues(asList(input.value), category, reference, `${field}.value`, lists, details);
  const condition: RuleCondition = {
    id,
    entity: 'message',
    operand,
    category,
    operator: input.operator as ConditionOperator,
    value,
    isKeywordsReferencePresent: reference,
    isMediaPresent: input.isMediaPresent ?? (operand !== 'text' && operand !== 'custom'),
  };
  if (input.message !== undefined) condition.message = asList(input.message);
  return condition;
}

function readValues(raw: string[], category: ConditionCategory, reference: boolean, field: string, lists: ListLookup, details: ErrorDetails): string[] {
  const { valuesPerCondition, termLength, patternLength } = MODERATION_LIMITS;
  if (raw.length < 1 || raw.length > valuesPerCondition) {
    details[field] = `must hold 1 to ${valuesPerCondition} values`;
    return [];
  }
  if (reference) return readReferences(raw, category, field, lists, details);
  const values = category === 'pattern' ? raw : raw.map((value) => value.trim());
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    // Words are matched; the categories Parley does not evaluate are kept as given, within a pattern's length.
    const limit = category === 'word' ? termLength : patternLength;
    const problem = category === 'pattern' ? patternProblem(value) : value.length === 0 ? 'is empty' : value.length > limit ? `is longer than ${limit} characters` : undefined;
    if (problem) {
      details[`${field}[${i}]`] = problem;
      break;
    }
  }
  return values;
}

/** Ids of keyword lists: each one of the app's (built-in or own), of the condition's category. */
function readReferences(raw: string[], category: ConditionCategory, field: string, lists: ListLookup, details: ErrorDetails): string[] {
  if (category !== 'word' && category !== 'pattern') {
    details[field] = `references keyword lists, which hold words or patterns: the category must be word or pattern, not ${category}`;
    return raw;
  }
  const unknown = raw.filter((id) => !ID.test(id) || lists(id) === undefined);
  if (unknown.length > 0) {
    details[field] = `names keyword lists the app does not have: ${unknown.slice(0, 10).join(', ')}`;
    return raw;
  }
  const mismatched = raw.filter((id) => lists(id) !== category);
  if (mismatched.length > 0) {
    details[field] = `names ${category === 'word' ? 'pattern' : 'word'} lists in a ${category} condition: ${mismatched.slice(0, 10).join(', ')}`;
  }
  return [...new Set(raw)];
}

/** The actions, each one Parley carries out, without repeats; problems are added to `details`. */
export function readActions(raw: string | string[], details: ErrorDetails): RuleAction[] {
  const actions = asList(raw);
  if (actions.length === 0) {
    details.action = `must name at least one action: ${RULE_ACTIONS.join(' or ')}`;
    return [];
  }
  const unknown = actions.filter((action) => !oneOf(RULE_ACTIONS, action));
  if (unknown.length > 0) {
    details.action = `holds actions Parley does not carry out (${unknown.slice(0, 5).join(', ')}): Parley carries out ${RULE_ACTIONS.join(' and ')}`;
    return [];
  }
  return [...new Set(actions as RuleAction[])];
}

/** Whether two conditions say the same. */
function sameCondition(a: RuleCondition, b: RuleCondition): boolean {
  return (
    a.id === b.id &&
    a.operand === b.operand &&
    a.category === b.category &&
    a.operator === b.operator &&
    a.isKeywordsReferencePresent === b.isKeywordsReferencePresent &&
    a.isMediaPresent === b.isMediaPresent &&
    sameStrings(a.value, b.value) &&
    sameStrings(a.message, b.message)
  );
}

export function sameStrings(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

export function sameConditions(a: readonly RuleCondition[], b: readonly RuleCondition[]): boolean {
  return a.length === b.length && a.every((condition, i) => sameCondition(condition, b[i]!));
}
