import { foldText, isWordCharAt, isWordCharBefore } from './fold.js';
import { KeywordAutomaton, type KeywordVisitor } from './keyword-automaton.js';
import { compilePatternSet, type CompiledPatternSet } from './patterns.js';
import { conditionEvaluation, type KeywordList, type ModerationRule, type RuleAction, type RuleCondition } from './rules.js';

/**
 * An app's moderation rules and keyword lists compiled into one matcher, which tells for a
 * message which rules match and what they do. Compiled once per app (and cached), evaluated on
 * every send: every word of every evaluated condition goes into one keyword automaton, so a
 * message is read once whatever the number of keywords; patterns are RE2 (linear in the text).
 */

/** The parts of a message moderation reads. */
export interface MessageToModerate {
  category: string;
  type: string;
  data: Record<string, unknown>;
}

/** A rule that matched a message. */
export interface RuleMatch {
  ruleId: string;
  ruleName: string;
  revision: number;
  /** The rule's condition that matched (the first that did, in the rule's order). */
  condition: RuleCondition;
  action: RuleAction[];
}

/** What moderation decides about a message. */
export interface Verdict {
  /** 'dropMessage' if any matching rule drops, else 'blockMessage' if any matching rule blocks, else undefined (the message passes). */
  action: RuleAction | undefined;
  /** Each matching enabled rule once, in the order of `rules` given to compileMatcher. */
  matches: RuleMatch[];
}

/** An app's compiled rules. */
export interface ModerationMatcher {
  /** Whether some enabled rule has a condition Parley evaluates (conditionEvaluation in rules.ts): when false, evaluate always passes and callers skip it. */
  readonly evaluates: boolean;
  /** Approximate bytes the compiled matcher holds (a cache bounds the sum over apps). */
  readonly bytes: number;
  /** The verdict on `message`. Its RuleMatch objects are shared between calls (frozen), as is the verdict of a message that passes. */
  evaluate(message: MessageToModerate): Verdict;
}

/**
 * How much of a custom message's data the `custom` operand reads: nesting below customData, text
 * in all (UTF-16 code units), and strings (each pattern condition runs once per string).
 */
export const CUSTOM_DATA_LIMITS = { depth: 16, chars: 64 * 1024, strings: 1_024 } as const;

/** The verdict on a message no rule matches: one object, frozen, so that passing allocates nothing. */
const PASSED: Verdict = Object.freeze({ action: undefined, matches: Object.freeze([]) as unknown as RuleMatch[] });

/** The operands Parley reads, as indices (a message of category `message` is read as `text`, `custom` as `custom`). */
const TEXT = 0;
const CUSTOM = 1;
type Operand = typeof TEXT | typeof CUSTOM;

/** One evaluated condition of a rule. */
interface CompiledCondition {
  /** Its index in the matcher's per-condition arrays (the word hits). */
  slot: number;
  /** Its patterns (a pattern condition's, or the pattern lists a word condition names). */
  patterns: CompiledPatternSet | undefined;
  equals: boolean;
  /** What evaluate reports when this condition is the rule's first to match. */
  match: RuleMatch;
}

interface CompiledRule {
  drops: boolean;
  blocks: boolean;
  /** Its conditions that can match messages of one operand, in the rule's order. */
  conditions: CompiledCondition[];
}

/** What a message of one operand goes through. */
interface OperandPlan {
  rules: CompiledRule[];
  /** The `contains` conditions with words: when all have matched, scanning can stop. */
  containsWithWords: number;
  /** Whether some condition has words (then segments are folded). */
  words: boolean;
}

/** Compiles an app's rules: `rules` the app's rules (disabled ones included: skipped); `lists` its keyword lists (a referenced id not among them is ignored). */
export function compileMatcher(rules: readonly ModerationRule[], lists: readonly KeywordList[]): ModerationMatcher {
  const listsById = new Map(lists.map((list) => [list.id, list]));
  const foldedLists = new Map<string, string[]>();
  // The same patterns in several conditions (a text and a custom one, say) are compiled once.
  const patternSets = new Map<string, CompiledPatternSet | undefined>();
  const terms = new TermTable();
  const plans: [OperandPlan, OperandPlan] = [emptyPlan(), emptyPlan()];
  let evaluates = false;
  let bytes = 0;
  let slots = 0;
  for (const rule of rules) {
    if (!rule.enabled) continue;
    const compiled: [CompiledRule, CompiledRule] = [ruleShell(rule), ruleShell(rule)];
    for (const condition of rule.conditions) {
      if (!conditionEvaluation(condition).evaluated) continue;
      evaluates = true;
      const slot = slots++;
      const operand: Operand = condition.operand === 'text' ? TEXT : CUSTOM;
      const { words, patterns } = conditionTerms(condition, listsById, foldedLists);
      const equals = condition.operator === 'equals';
      let hasWords = false;
      for (const word of words) hasWords = terms.add(word, slot, operand, equals) || hasWords;
      const key = JSON.stringify(patterns);
      const known = patternSets.has(key);
      const compiledPatterns = known ? patternSets.get(key) : compilePatternSet(patterns);
      patternSets.set(key, compiledPatterns);
      // A condition with nothing left to match (its lists gone, its patterns refused) never matches.
      if (!hasWords && !compiledPatterns) continue;
      const plan = plans[operand];
      if (hasWords) plan.words = true;
      if (hasWords && !equals) plan.containsWithWords++;
      const match = ruleMatch(rule, condition);
      compiled[operand].conditions.push({ slot, patterns: compiledPatterns, equals, match });
      bytes += conditionBytes(condition) + (known ? 0 : (compiledPatterns?.bytes ?? 0));
    }
    for (const operand of [TEXT, CUSTOM] as const) if (compiled[operand].conditions.length > 0) plans[operand].rules.push(compiled[operand]);
  }
  return new CompiledMatcher(evaluates, plans, terms.finish(slots), bytes);
}

const emptyPlan = (): OperandPlan => ({ rules: [], containsWithWords: 0, words: false });

function ruleShell(rule: ModerationRule): CompiledRule {
  return { drops: rule.action.includes('dropMessage'), blocks: rule.action.includes('blockMessage'), conditions: [] };
}

function ruleMatch(rule: ModerationRule, condition: RuleCondition): RuleMatch {
  const action = Object.freeze([...rule.action]) as RuleAction[];
  return Object.freeze({ ruleId: rule.id, ruleName: rule.name, revision: rule.revision, condition, action });
}

/** Rough bytes of a compiled condition and its RuleMatch (their objects and arrays). */
const CONDITION_BYTES = 400;
/** A string's header, beside its characters. */
const STRING_BYTES = 16;

/** What a compiled condition holds: its objects, and the rule's condition its RuleMatch keeps (the inline values). */
function conditionBytes(condition: RuleCondition): number {
  let bytes = CONDITION_BYTES;
  for (const value of condition.value) bytes += STRING_BYTES + 2 * value.length;
  return bytes;
}

/**
 * A condition's words (folded) and patterns. Inline values are words or patterns as the
 * condition's category says; a referenced list's terms are what the list's category says (a
 * word condition naming a pattern list runs its patterns), so that a list always means the same
 * thing. A list's words are folded once however many conditions name it (`foldedLists`).
 */
type Terms = { words: readonly string[]; patterns: readonly string[] };
function conditionTerms(condition: RuleCondition, listsById: ReadonlyMap<string, KeywordList>, foldedLists: Map<string, string[]>): Terms {
  const inlineWords = condition.category === 'word';
  if (!condition.isKeywordsReferencePresent) return inlineWords ? { words: condition.value.map(foldText), patterns: [] } : { words: [], patterns: condition.value };
  const words: string[] = [];
  const patterns: string[] = [];
  for (const id of new Set(condition.value)) {
    const list = listsById.get(id);
    if (!list) continue;
    if (list.category === 'pattern') {
      for (const term of list.searchTerms) patterns.push(term);
      continue;
    }
    let folded = foldedLists.get(id);
    if (!folded) foldedLists.set(id, (folded = list.searchTerms.map(foldText)));
    for (const word of folded) words.push(word);
  }
  return { words, patterns };
}

/**
 * The folded words of every condition, each with the conditions (slots) that hold it: `contains`
 * words for the automaton, `equals` words for a map from the whole folded segment.
 */
class TermTable {
  private readonly containsIndex = new Map<string, number>();
  private readonly contains: string[] = [];
  /** Per contains word, the head of its slot list (an index into entrySlot/entryNext), last added first. */
  private readonly head: number[] = [];
  private readonly entrySlot: number[] = [];
  private readonly entryNext: number[] = [];
  private readonly equals = new Map<string, number[]>();
  private slotOperand: number[] = [];

  /** Adds folded `word` for condition `slot`; false when it is empty. */
  add(word: string, slot: number, operand: Operand, equals: boolean): boolean {
    if (word.length === 0) return false;
    this.slotOperand[slot] = operand;
    if (equals) {
      const slots = this.equals.get(word);
      if (!slots) this.equals.set(word, [slot]);
      else if (slots[slots.length - 1] !== slot) slots.push(slot);
      return true;
    }
    let term = this.containsIndex.get(word);
    if (term === undefined) {
      term = this.contains.length;
      this.containsIndex.set(word, term);
      this.contains.push(word);
      this.head.push(-1);
    }
    const head = this.head[term]!;
    // Conditions are added one after the other: a repeat within one is the last slot added.
    if (head >= 0 && this.entrySlot[head] === slot) return true;
    this.entrySlot.push(slot);
    this.entryNext.push(head);
    this.head[term] = this.entrySlot.length - 1;
    return true;
  }

  /** The built tables, for `slots` conditions in all. */
  finish(slots: number): WordTables {
    const automaton = new KeywordAutomaton(this.contains);
    const termSlotStart = new Int32Array(this.contains.length + 1);
    const termSlots = new Int32Array(this.entrySlot.length);
    let at = 0;
    for (let term = 0; term < this.contains.length; term++) {
      termSlotStart[term] = at;
      for (let entry = this.head[term]!; entry >= 0; entry = this.entryNext[entry]!) termSlots[at++] = this.entrySlot[entry]!;
    }
    termSlotStart[this.contains.length] = at;
    const slotOperand = Uint8Array.from({ length: slots }, (_, slot) => this.slotOperand[slot] ?? TEXT);
    let equalsBytes = 0;
    for (const [word, held] of this.equals) equalsBytes += MAP_ENTRY_BYTES + STRING_BYTES + 2 * word.length + 8 * held.length;
    const bytes = automaton.bytes + termSlotStart.byteLength + termSlots.byteLength + slotOperand.byteLength + 2 * slots + equalsBytes;
    return { automaton, termSlotStart, termSlots, slotOperand, equals: this.equals, bytes };
  }
}

/** A Map entry with a string key and a small array (headers, hash table slot). */
const MAP_ENTRY_BYTES = 80;

interface WordTables {
  automaton: KeywordAutomaton;
  /** The slots holding contains word t: termSlots[termSlotStart[t] .. termSlotStart[t + 1]). */
  termSlotStart: Int32Array;
  termSlots: Int32Array;
  slotOperand: Uint8Array;
  equals: ReadonlyMap<string, readonly number[]>;
  bytes: number;
}

/** The strings of the message being evaluated (module scratch: evaluate never yields, so never overlaps itself). */
const segments: string[] = [];

class CompiledMatcher implements ModerationMatcher, KeywordVisitor {
  readonly bytes: number;
  /** Per condition slot: 1 once one of its words was found in the message being evaluated. */
  private readonly wordHit: Uint8Array;
  /** The evaluated message's operand, and how many of its contains conditions have not matched yet. */
  private operand: Operand = TEXT;
  private unmatched = 0;

  constructor(
    readonly evaluates: boolean,
    private readonly plans: readonly [OperandPlan, OperandPlan],
    private readonly words: WordTables,
    conditionBytes: number,
  ) {
    this.wordHit = new Uint8Array(words.slotOperand.length);
    this.bytes = words.bytes + this.wordHit.byteLength + conditionBytes;
  }

  evaluate(message: MessageToModerate): Verdict {
    const operand = message.category === 'message' ? TEXT : message.category === 'custom' ? CUSTOM : undefined;
    if (operand === undefined) return PASSED;
    const plan = this.plans[operand];
    if (plan.rules.length === 0) return PASSED;
    collectSegments(message.data, operand, segments);
    try {
      if (segments.length === 0) return PASSED;
      this.findWords(plan, operand);
      return this.verdict(plan);
    } finally {
      segments.length = 0;
    }
  }

  /** Marks in wordHit the conditions of `operand` whose words occur in the segments (whole words; the whole segment for equals). */
  private findWords(plan: OperandPlan, operand: Operand): void {
    this.wordHit.fill(0);
    if (!plan.words) return;
    this.operand = operand;
    this.unmatched = plan.containsWithWords;
    for (const segment of segments) {
      const folded = foldText(segment);
      if (this.unmatched > 0) this.words.automaton.scan(folded, this);
      // Only when there are equals words: hashing the segment costs as much as folding it.
      const held = this.words.equals.size > 0 ? this.words.equals.get(folded) : undefined;
      if (held) for (const slot of held) this.hit(slot);
    }
  }

  /** The automaton found contains word `term`: its conditions (of the message's operand) match. True (stop) when all have. */
  found(term: number): boolean {
    const { termSlotStart, termSlots } = this.words;
    for (let at = termSlotStart[term]!; at < termSlotStart[term + 1]!; at++) {
      if (this.hit(termSlots[at]!) && --this.unmatched === 0) return true;
    }
    return false;
  }

  /** Marks `slot` matched if it reads the message's operand; whether it newly did. */
  private hit(slot: number): boolean {
    if (this.wordHit[slot] === 1 || this.words.slotOperand[slot] !== this.operand) return false;
    this.wordHit[slot] = 1;
    return true;
  }

  /** Each rule's first matching condition; patterns run only for conditions no earlier one in their rule decided. */
  private verdict(plan: OperandPlan): Verdict {
    let matches: RuleMatch[] | undefined;
    let drops = false;
    let blocks = false;
    for (const rule of plan.rules) {
      for (const condition of rule.conditions) {
        if (!this.conditionMatches(condition)) continue;
        (matches ??= []).push(condition.match);
        drops ||= rule.drops;
        blocks ||= rule.blocks;
        break;
      }
    }
    if (!matches) return PASSED;
    return { action: drops ? 'dropMessage' : blocks ? 'blockMessage' : undefined, matches };
  }

  private conditionMatches(condition: CompiledCondition): boolean {
    if (this.wordHit[condition.slot] === 1) return true;
    const patterns = condition.patterns;
    if (!patterns) return false;
    for (const segment of segments) if (condition.equals ? patterns.matchesWhole(segment) : patterns.find(segment)) return true;
    return false;
  }
}

/**
 * Into `into`, the strings a condition of `operand` reads: a text message's text; a custom
 * message's text, then every string in its customData (nested objects and arrays too, within
 * CUSTOM_DATA_LIMITS). Each string is a segment of its own: words never join across two.
 */
function collectSegments(data: Record<string, unknown>, operand: Operand, into: string[]): void {
  const text = data.text;
  if (operand === TEXT) {
    if (typeof text === 'string') into.push(text);
    return;
  }
  let budget: number = CUSTOM_DATA_LIMITS.chars;
  if (typeof text === 'string') budget = takeString(text, budget, into);
  if (budget > 0) collectStrings(data.customData, 0, budget, into);
}

/** Adds the strings within `value` (found at nesting `depth` below customData) to `into`; returns the budget left. */
function collectStrings(value: unknown, depth: number, budget: number, into: string[]): number {
  if (typeof value === 'string') return takeString(value, budget, into);
  if (value === null || typeof value !== 'object' || depth >= CUSTOM_DATA_LIMITS.depth) return budget;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && budget > 0; i++) budget = collectStrings(value[i], depth + 1, budget, into);
    return budget;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (budget <= 0) break;
    if (Object.hasOwn(record, key)) budget = collectStrings(record[key], depth + 1, budget, into);
  }
  return budget;
}

/**
 * Adds `text` to `into` within `budget` code units (and CUSTOM_DATA_LIMITS.strings), and returns
 * the budget left. A text that does not fit is cut where a word ends, so that the cut cannot make
 * a word ("shithead" read as "shit") that the message does not hold.
 */
function takeString(text: string, budget: number, into: string[]): number {
  if (into.length >= CUSTOM_DATA_LIMITS.strings) return 0;
  if (text.length <= budget) {
    into.push(text);
    return budget - text.length;
  }
  const cut = wordEndAtOrBefore(text, budget);
  if (cut > 0) into.push(text.slice(0, cut));
  return 0;
}

/** The greatest index ≤ `limit` at which `text` may be cut without splitting a word or a surrogate pair. */
function wordEndAtOrBefore(text: string, limit: number): number {
  let cut = limit;
  // Not between the halves of a surrogate pair (a low surrogate is 0xdc00–0xdfff), nor inside a word.
  while (cut > 0 && ((text.charCodeAt(cut) & 0xfc00) === 0xdc00 || (isWordCharBefore(text, cut) && isWordCharAt(text, cut)))) cut--;
  return cut;
}
