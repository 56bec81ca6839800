import { Type } from '@sinclair/typebox';
import { CONDITION_CATEGORIES, CONDITION_OPERANDS, CONDITION_OPERATORS, MODERATION_ID_PATTERN, MODERATION_LIMITS, RULE_ACTIONS } from '../domain/moderation/rules.js';
import { Data, DataWithMeta, SuccessMessage, UnixTime } from './common.schema.js';

// Moderation rules and keyword lists (docs/compatibility.md, "Moderation rules and keyword
// lists"). Operands, categories, operators and actions are checked by the service, which names
// the allowed values in its answer; the schema checks types and lengths.

const ModerationId = (description: string) => Type.String({ pattern: MODERATION_ID_PATTERN, minLength: 1, maxLength: MODERATION_LIMITS.idLength, description });

const Name = (description: string) => Type.String({ minLength: 1, maxLength: MODERATION_LIMITS.nameLength, description });
const Description = (description: string) => Type.String({ maxLength: MODERATION_LIMITS.descriptionLength, description });

const Term = Type.String({ maxLength: MODERATION_LIMITS.patternLength });
const Notes = Type.Union([Type.String({ maxLength: 1_000 }), Type.Array(Type.String({ maxLength: 1_000 }), { maxItems: 10 })], {
  description: 'Notes shown with the condition (a string or a list), kept as given.',
});

export const ConditionInput = Type.Object({
  id: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000, description: 'The condition’s number; conditions without one are numbered after the others.' })),
  entity: Type.Optional(Type.String({ maxLength: 50, description: 'Always `message` (the default).' })),
  operand: Type.String({ maxLength: 50, description: `The part of the message read: ${CONDITION_OPERANDS.join(', ')}.` }),
  category: Type.String({ maxLength: 50, description: `How it is read: ${CONDITION_CATEGORIES.join(', ')} (Parley evaluates word and pattern on text and custom).` }),
  operator: Type.String({ maxLength: 50, description: `${CONDITION_OPERATORS.join(' or ')}.` }),
  value: Type.Union([Term, Type.Array(Term, { maxItems: MODERATION_LIMITS.valuesPerCondition })], {
    description: 'Words or patterns (a list, or one string); with a reference flag, ids of keyword lists.',
  }),
  isKeywordsReferencePresent: Type.Optional(Type.Boolean({ description: 'The values are ids of keyword lists.' })),
  isKeywordReferencePresent: Type.Optional(Type.Boolean({ description: 'The same flag, as the vendor’s schema spells it.' })),
  isListReferencePresent: Type.Optional(Type.Boolean({ description: 'The same flag, as one of the vendor’s examples spells it.' })),
  isMediaPresent: Type.Optional(Type.Boolean({ description: 'Defaults to true for image, video, audio and file operands.' })),
  message: Type.Optional(Notes),
});

const Action = Type.String({ maxLength: 50 });
const ruleFields = {
  id: ModerationId('A unique id for the rule: letters, digits, - and _ (case kept).'),
  name: Name('Name of the rule.'),
  description: Type.Optional(Description('What the rule is for.')),
  enabled: Type.Optional(Type.Boolean({ description: 'Whether the rule is applied; true unless given.' })),
  conditions: Type.Array(ConditionInput, {
    minItems: 1,
    maxItems: MODERATION_LIMITS.conditionsPerRule,
    description: 'Conditions: a message matching any one of them matches the rule.',
  }),
  action: Type.Union([Action, Type.Array(Action, { maxItems: 10 })], { description: `What a matching rule does: ${RULE_ACTIONS.join(', ')}.` }),
  filters: Type.Optional(
    Type.Array(Type.Object({}, { additionalProperties: true }), { maxItems: 100, description: 'Not supported (refused unless empty): a rule applies to every message of the app.' }),
  ),
};

export const CreateRuleBody = Type.Object(ruleFields);

export const UpdateRuleBody = Type.Object({
  id: Type.Optional(ruleFields.id),
  name: Type.Optional(ruleFields.name),
  description: ruleFields.description,
  enabled: ruleFields.enabled,
  conditions: Type.Optional(ruleFields.conditions),
  action: Type.Optional(ruleFields.action),
  filters: ruleFields.filters,
});

export const RuleParams = Type.Object({ ruleId: Type.String({ minLength: 1, maxLength: 200, description: 'A rule id.' }) });
export const KeywordParams = Type.Object({ keywordId: Type.String({ minLength: 1, maxLength: 200, description: 'A keyword list id.' }) });

export const ModerationListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Items per page.' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1, description: 'Page number, from 1.' })),
});

const Condition = Type.Object({
  id: Type.Integer(),
  isKeywordsReferencePresent: Type.Boolean(),
  isMediaPresent: Type.Boolean(),
  entity: Type.String(),
  operand: Type.String(),
  category: Type.String(),
  operator: Type.String(),
  value: Type.Array(Type.String()),
  message: Type.Optional(Type.Array(Type.String())),
  evaluated: Type.Boolean({ description: 'Whether Parley evaluates the condition on the messages it reads.' }),
  reason: Type.Optional(Type.String({ description: 'Why it is not evaluated (stored and shown; the moderation hook may read it).' })),
});

export const Rule = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    enabled: Type.Boolean(),
    conditions: Type.Array(Condition),
    action: Type.Array(Type.String()),
    active: Type.Boolean({ description: 'True, but for the superseded revisions of list-rule-revisions.' }),
    createdAt: UnixTime('Unix seconds.'),
    updatedAt: UnixTime('Unix seconds.'),
    revisionId: Type.String({ description: '<appId>_<ruleId>_<revision>' }),
    default: Type.Optional(Type.Boolean({ description: 'A built-in rule (or the app’s version of one).' })),
  },
  { description: 'A moderation rule, as the vendor returns it.' },
);

const ListMeta = Type.Object({ current: Type.Object({ limit: Type.Integer(), count: Type.Integer() }) });

export const RuleResponse = Data(Rule);
export const RuleListResponse = DataWithMeta(Type.Array(Rule), ListMeta);
export const DeleteResponse = Data(SuccessMessage);

// Keyword lists

const ListCategory = Type.Union([Type.Literal('word'), Type.Literal('pattern')], { description: 'word (whole words, any case) or pattern (RE2 regular expressions); word unless given.' });
const SearchTerms = Type.Union(
  [Type.String({ maxLength: MODERATION_LIMITS.listBytes, description: 'Comma-separated (read as CSV).' }), Type.Array(Term, { maxItems: MODERATION_LIMITS.termsPerList })],
  { description: `The terms: a list, or comma-separated text; 1 to ${MODERATION_LIMITS.termsPerList}, repeats dropped.` },
);

const listFields = {
  id: ModerationId('A unique id for the list: letters, digits, - and _ (case kept).'),
  name: Name('Name of the list.'),
  description: Type.Optional(Description('What the list holds.')),
  category: Type.Optional(ListCategory),
};

export const CreateKeywordListBody = Type.Object({
  id: listFields.id,
  name: listFields.name,
  description: listFields.description,
  category: listFields.category,
  searchTerms: SearchTerms,
});

export const UpdateKeywordListBody = Type.Object({
  id: Type.Optional(listFields.id),
  name: Type.Optional(listFields.name),
  description: listFields.description,
  category: listFields.category,
  searchTerms: Type.Optional(SearchTerms),
});

const File = Type.Optional(Type.String({ format: 'binary', description: `A CSV file (RFC 4180, UTF-8, at most ${MODERATION_LIMITS.listBytes} bytes): every non-empty cell is a term.` }));
const FormTerms = Type.Optional(Type.String({ description: 'Comma-separated terms (read as CSV), if no file is sent; sent repeatedly, each is a line of it.' }));

export const CreateKeywordListForm = Type.Object({
  id: listFields.id,
  name: listFields.name,
  description: listFields.description,
  category: listFields.category,
  searchTerms: FormTerms,
  file: File,
});

export const UpdateKeywordListForm = Type.Object({
  id: Type.Optional(listFields.id),
  name: Type.Optional(listFields.name),
  description: listFields.description,
  category: listFields.category,
  searchTerms: FormTerms,
  file: File,
});

export const KeywordList = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    description: Type.Optional(Type.String()),
    category: Type.String(),
    isCSV: Type.Boolean({ description: 'Whether the terms came from a CSV file.' }),
    searchTerms: Type.Array(Type.String()),
    createdAt: UnixTime('Unix seconds.'),
    updatedAt: UnixTime('Unix seconds.'),
    revisionId: Type.String({ description: '<appId>_<listId>_<revision>' }),
    active: Type.Boolean(),
    default: Type.Optional(Type.Boolean({ description: 'A built-in list (or the app’s version of one).' })),
  },
  { description: 'A keyword list, as the vendor returns it.' },
);

export const KeywordListResponse = Data(KeywordList);
export const KeywordListListResponse = DataWithMeta(Type.Array(KeywordList), ListMeta);
