import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EMAIL_PATTERN, LINK_PATTERN, PHONE_PATTERN, PROFANITY_WORDS } from '../../src/domain/moderation/builtins.js';
import { BUILTIN_LISTS, BUILTIN_RULES } from '../../src/domain/moderation/defaults.js';
import { foldText, isWordCharAt, isWordCharBefore } from '../../src/domain/moderation/fold.js';
import { KeywordAutomaton } from '../../src/domain/moderation/keyword-automaton.js';
import { compileMatcher, CUSTOM_DATA_LIMITS, type MessageToModerate } from '../../src/domain/moderation/matcher.js';
import { compilePattern, compilePatternSet } from '../../src/domain/moderation/patterns.js';
import type { KeywordList, ModerationRule, RuleAction, RuleCondition } from '../../src/domain/moderation/rules.js';

let nextConditionId = 1;

/** A condition: a text word condition `contains` unless `fields` say otherwise. */
function condition(fields: Partial<RuleCondition>): RuleCondition {
  const base: RuleCondition = {
    id: nextConditionId++,
    entity: 'message',
    operand: 'text',
    category: 'word',
    operator: 'contains',
    value: [],
    isKeywordsReferencePresent: false,
    isMediaPresent: false,
  };
  return Object.assign(base, fields);
}

function rule(id: string, conditions: RuleCondition[], action: RuleAction[] = ['blockMessage'], enabled = true): ModerationRule {
  return { id, name: `Rule ${id}`, enabled, conditions, action, revision: 3, createdAt: 1, updatedAt: 2 };
}

function list(id: string, searchTerms: string[], category: 'word' | 'pattern' = 'word'): KeywordList {
  return { id, name: id, category, isCSV: false, searchTerms, revision: 1, createdAt: 1, updatedAt: 1 };
}

const textMessage = (text: unknown): MessageToModerate => ({ category: 'message', type: 'text', data: { text } });
const customMessage = (customData: unknown, text?: string): MessageToModerate => ({ category: 'custom', type: 'location', data: text === undefined ? { customData } : { customData, text } });

/** Asserts, for each text, whether a rule of one condition (`fields`) matches it in a text message. */
function assertTexts(fields: Partial<RuleCondition>, expected: Record<string, boolean>, lists: KeywordList[] = []): void {
  const matcher = compileMatcher([rule('r', [condition(fields)])], lists);
  for (const [text, match] of Object.entries(expected)) assert.equal(matcher.evaluate(textMessage(text)).matches.length > 0, match, JSON.stringify(text));
}

const words = (value: string[], operator: 'contains' | 'equals' = 'contains') => ({ value, operator });

/** A deterministic generator of numbers in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    const t = Math.imul(state ^ (state >>> 15), 1 | state);
    const u = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((u ^ (u >>> 14)) >>> 0) / 4294967296;
  };
}

function randomWord(next: () => number, alphabet: string, min: number, max: number): string {
  const length = min + Math.floor(next() * (max - min + 1));
  let word = '';
  for (let i = 0; i < length; i++) word += alphabet[Math.floor(next() * alphabet.length)];
  return word;
}

describe('foldText', () => {
  it('lower-cases, drops accents (composed or not) and spells out letters NFKD keeps whole', () => {
    assert.equal(foldText('HeLLo WORLD'), 'hello world');
    assert.equal(foldText('Fück Crème Brûlée ÀÉÎÕÜ'), 'fuck creme brulee aeiou');
    assert.equal(foldText('Fu\u0308ck'), 'fuck');
    assert.equal(foldText('Straße STRASSE ẞ'), 'strasse strasse ss');
    assert.equal(foldText('Æsir œuvre Øresund Łódź Đorđe Þór ıi'), 'aesir oeuvre oresund lodz dorde thor ii');
  });

  it('decomposes compatibility characters: ligatures, full-width and styled letters', () => {
    assert.equal(foldText('ﬁne ＳＨＩＴ 𝐬𝐡𝐢𝐭 ℍ'), 'fine shit shit h');
  });

  it('collapses runs of white space to one space and trims', () => {
    assert.deepEqual(['  piss \t\n  off  ', 'piss\u00a0\u2003off', 'a  b', '', ' \n '].map(foldText), ['piss off', 'piss off', 'a b', '', '']);
  });

  it('drops invisible characters that would split a word', () => {
    assert.equal(foldText('sh\u00adit f\u200buck'), 'shit fuck');
  });

  it('changes nothing in a folded text', () => {
    for (const text of ['Straße ÆON  Fück', 'ﬁne\tthing', 'ÀÉÎ  õü', 'plain ascii']) assert.equal(foldText(foldText(text)), foldText(text));
  });

  it('tells word characters: letters and digits of any script, astral ones too', () => {
    assert.deepEqual(
      [0, 1, 2, 3, 4, 5].map((i) => isWordCharAt('a1_ é', i)),
      [true, true, false, false, true, false],
    );
    assert.deepEqual([isWordCharBefore('𝒜x', 2), isWordCharBefore('😀x', 2), isWordCharBefore('x', 0), isWordCharBefore('ж', 1)], [true, false, false, true]);
  });
});

describe('KeywordAutomaton', () => {
  it('finds whole-word occurrences of every keyword, longer ones first at one end', () => {
    const automaton = new KeywordAutomaton(['he', 'she', 'his', 'hers', 'she said']);
    assert.deepEqual(automaton.occurrences('ushers said he'), [{ term: 0, start: 12, end: 14 }]);
    const occurrences = [
      { term: 1, start: 0, end: 3 },
      { term: 4, start: 0, end: 8 },
      { term: 2, start: 9, end: 12 },
    ];
    assert.deepEqual(automaton.occurrences('she said his'), occurrences);
  });

  // Over 'ab -' the nodes are sparse (binary search); over 'abcd_`' (a run of codes) many are dense (direct slots).
  for (const [alphabet, count] of [
    ['ab -', 30],
    ['abcd_`', 300],
  ] as const)
    it(`agrees with a naive search on random keywords and texts over ${alphabet}`, () => {
      const next = random(7);
      for (let round = 0; round < 40; round++) {
        const terms = [...new Set(Array.from({ length: count }, () => randomWord(next, alphabet, 1, 5)))];
        const automaton = new KeywordAutomaton(terms);
        const text = randomWord(next, alphabet, 0, 80);
        const naive = [];
        for (let end = 1; end <= text.length; end++) {
          for (const [term, keyword] of terms.map((k, i) => [i, k] as const).sort((x, y) => y[1].length - x[1].length)) {
            const start = end - keyword.length;
            if (start < 0 || text.slice(start, end) !== keyword) continue;
            const before = isWordCharAt(keyword, 0) && isWordCharBefore(text, start);
            const after = isWordCharBefore(keyword, keyword.length) && isWordCharAt(text, end);
            if (!before && !after) naive.push({ term, start, end });
          }
        }
        assert.deepEqual(automaton.occurrences(text), naive, `${JSON.stringify(terms)} in ${JSON.stringify(text)}`);
      }
    });

  it('reads astral characters (two code units) and ignores empty keywords', () => {
    const automaton = new KeywordAutomaton(['🖕', '', 'x𝒜']);
    assert.deepEqual(automaton.occurrences('a🖕🖕 x𝒜 x𝒜𝒜'), [
      { term: 0, start: 1, end: 3 },
      { term: 0, start: 3, end: 5 },
      { term: 2, start: 6, end: 9 },
    ]);
    assert.deepEqual(new KeywordAutomaton([]).occurrences('anything'), []);
  });

  it('stops when the visitor says so', () => {
    const automaton = new KeywordAutomaton(['a']);
    let seen = 0;
    automaton.scan('a a a a', { found: () => ++seen === 2 });
    assert.equal(seen, 2);
  });
});

describe('compilePatternSet', () => {
  it('matches when any pattern does, each keeping its own flags', () => {
    const set = compilePatternSet(['(?i)abc', 'x+y', '^start'])!;
    assert.equal(set.count, 3);
    assert.deepEqual(['__ABC__', 'XY', 'a xxy', 'no start'].map(set.find), [true, false, true, false]);
    assert.deepEqual(['xxxy', 'abc!'].map(set.matchesWhole), [true, false]);
    assert.ok(set.bytes > 0);
  });

  it('leaves out what RE2 refuses, and falls back to one by one when the alternation does not parse', () => {
    assert.equal(compilePatternSet(['(a', '(?<=a)b', '']), undefined);
    const quoted = compilePatternSet(['\\Qa.b', 'c', '(x'])!;
    assert.equal(quoted.count, 2);
    assert.deepEqual(['a.b', 'axb', 'c'].map(quoted.find), [true, false, true]);
  });

  it('agrees with compilePattern on the built-in patterns', () => {
    const texts = ['mail jane.doe@example.com now', 'call +1 (415) 555-2671', '2024-2025', 'see www.example.org', 'nothing here', 'a@b.co'];
    for (const source of [EMAIL_PATTERN, PHONE_PATTERN, LINK_PATTERN]) {
      const one = compilePattern(source);
      const set = compilePatternSet([source])!;
      for (const text of texts) {
        assert.equal(set.find(text), one.find(text), `${source} in ${text}`);
        assert.equal(set.matchesWhole(text), one.matchesWhole(text), `${source} is ${text}`);
      }
    }
  });
});

describe('compileMatcher: words', () => {
  it('matches whole words only, whatever the case and accents', () => {
    assertTexts(words(['cunt', 'shit', 'fuck']), {
      Scunthorpe: false,
      'SHIT!': true,
      '(shit)': true,
      Fück: true,
      fucké: false, // é is a letter: one word
      fuckß: false,
      fuck1: false, // digits are word characters
      _fuck_: true, // underscore is not
      'oh shit': true,
      'shit happens': true,
      'shitty weather': false,
    });
  });

  it('folds the terms too, and matches phrases across any white space', () => {
    assertTexts(words(['Piss  OFF', 'STRASSE', 'crème']), { 'just piss\n off!': true, pissoff: false, 'die Straße': true, CREME: true });
  });

  it('matches terms holding symbols: an edge that is not a word character needs no boundary', () => {
    assertTexts(words(['f*ck', 'a$$', '$hit']), { 'f*ck you': true, 'f*cking': false, 'what an a$$!': true, a$$hole: true, ba$$: false, oh$hit: true });
  });

  it('equals: the whole folded text is the term', () => {
    assertTexts(words(['hello there', 'hello'], 'equals'), { '  HELLO   there ': true, hello: true, 'hello you': false });
    assertTexts(words(['hello'], 'contains'), { 'hello you': true });
  });

  it('ignores terms that fold to nothing', () => {
    assertTexts(words(['', ' ', '\u0301']), { 'anything at all': false });
    assertTexts(words(['', ' '], 'equals'), { '': false });
  });
});

describe('compileMatcher: patterns', () => {
  const pattern = (value: string[], operator: 'contains' | 'equals' = 'contains') => ({ category: 'pattern' as const, value, operator });

  it('contains finds a match somewhere; equals needs the whole text, unfolded', () => {
    assertTexts(pattern(['\\d{3}', 'Crème']), { 'room 101 please': true, creme: false, 'Crème!': true });
    assertTexts(pattern(['\\d{3}'], 'equals'), { 'room 101': false, '101': true });
    assertTexts(pattern(['(?i)crème']), { CRÈME: true });
  });

  it('skips a pattern that does not compile, never throws', () => {
    assertTexts(pattern(['(unclosed', 'ok']), { ok: true, '(unclosed': false });
  });

  it('finds e-mail addresses, phone numbers and links with the built-in patterns, and not years or prices', () => {
    assertTexts(pattern([EMAIL_PATTERN]), { 'write to jane.doe+x@mail.example.co.uk': true, 'meet me @ noon': false });
    assertTexts(pattern([PHONE_PATTERN]), { 'call +1 (415) 555-2671 today': true, '06 12 34 56 78': true, 'the 2024-2025 season costs 1500': false });
    assertTexts(pattern([LINK_PATTERN]), { 'see https://example.org/x': true, 'go to Example.COM now': true, 'e.g. this one': false });
  });

  it('runs a catastrophic-looking pattern in linear time', () => {
    const text = `${'a'.repeat(30_000)}b`;
    assertTexts(pattern(['(a+)+$']), { [text]: false });
    assertTexts(pattern(['(a+)+'], 'equals'), { [text]: false });
    assertTexts(pattern(['(a|aa)+b']), { [text]: true });
  });
});

describe('compileMatcher: what a condition reads', () => {
  const textRule = rule('text', [condition({ value: ['shit'] })]);
  const customRule = rule('custom', [condition({ operand: 'custom', value: ['shit', 'piss off'] })]);
  const matcher = compileMatcher([textRule, customRule], []);
  const ruleIds = (message: MessageToModerate) => matcher.evaluate(message).matches.map((match) => match.ruleId);

  it("text reads a text message's text; custom reads a custom message", () => {
    assert.deepEqual(ruleIds(textMessage('oh shit')), ['text']);
    assert.deepEqual(ruleIds(customMessage({ note: 'oh shit' })), ['custom']);
    assert.deepEqual(ruleIds(customMessage({}, 'oh shit')), ['custom'], "a custom message's text too");
    assert.deepEqual(ruleIds({ category: 'action', type: 'message', data: { text: 'shit' } }), []);
    assert.deepEqual(ruleIds(textMessage(42)), []);
    assert.deepEqual(ruleIds({ category: 'message', type: 'text', data: {} }), []);
  });

  it('custom reads every string in customData, nested in objects and arrays', () => {
    assert.deepEqual(ruleIds(customMessage({ a: { b: [1, { c: ['fine', 'SHIT'] }] } })), ['custom']);
    assert.deepEqual(ruleIds(customMessage(['x', ['y', 'shit']])), ['custom']);
    assert.deepEqual(ruleIds(customMessage('shit')), ['custom']);
  });

  it('reads each string on its own: words never join across two', () => {
    assert.deepEqual(ruleIds(customMessage({ a: 'piss', b: 'off' })), []);
    assert.deepEqual(ruleIds(customMessage({ a: 'sh', b: 'it' })), []);
    assert.deepEqual(ruleIds(customMessage({ a: 'piss off' })), ['custom']);
  });

  it('ignores keys and values that are not strings', () => {
    assert.deepEqual(ruleIds(customMessage({ shit: 1, n: 12345, yes: true, none: null })), []);
    const digits = compileMatcher([rule('p', [condition({ operand: 'custom', category: 'pattern', value: ['\\d{5}'] })])], []);
    assert.equal(digits.evaluate(customMessage({ n: 12345 })).matches.length, 0);
    assert.equal(digits.evaluate(customMessage({ n: '12345' })).matches.length, 1);
  });

  it(`reads customData ${CUSTOM_DATA_LIMITS.depth} levels deep, no deeper`, () => {
    const nested = (depth: number): unknown => {
      let value: unknown = 'shit';
      for (let d = 0; d < depth; d++) value = d % 2 === 0 ? { k: value } : [value];
      return value;
    };
    assert.deepEqual(ruleIds(customMessage(nested(CUSTOM_DATA_LIMITS.depth))), ['custom']);
    assert.deepEqual(ruleIds(customMessage(nested(CUSTOM_DATA_LIMITS.depth + 1))), []);
  });

  it(`reads ${CUSTOM_DATA_LIMITS.chars} characters and ${CUSTOM_DATA_LIMITS.strings} strings of custom data in all, cutting where a word ends`, () => {
    const before = 'x '.repeat((CUSTOM_DATA_LIMITS.chars - 8) / 2);
    assert.deepEqual(ruleIds(customMessage({ a: `${before}shit` })), ['custom']);
    assert.deepEqual(ruleIds(customMessage({ a: `${before}xxxx shit` })), [], 'past the bound');
    const cutInside = 'x '.repeat((CUSTOM_DATA_LIMITS.chars - 4) / 2);
    assert.deepEqual(ruleIds(customMessage({ a: `${cutInside}shithead` })), [], 'not "shit" from a cut "shithead"');
    assert.deepEqual(ruleIds(customMessage({ a: 'x'.repeat(CUSTOM_DATA_LIMITS.chars), b: 'shit' })), [], 'the budget is for all strings');
    assert.deepEqual(ruleIds(customMessage({ a: 'x'.repeat(CUSTOM_DATA_LIMITS.chars - 10), b: 'shit' })), ['custom']);
    const strings = (count: number) => [...Array.from({ length: count }, () => ''), 'shit'];
    assert.deepEqual([ruleIds(customMessage(strings(CUSTOM_DATA_LIMITS.strings - 1))), ruleIds(customMessage(strings(CUSTOM_DATA_LIMITS.strings)))], [['custom'], []]);
  });

  it('keeps a word that a text rule and a custom rule share apart', () => {
    const shared = compileMatcher([rule('t', [condition({ value: ['foo'] })]), rule('c', [condition({ operand: 'custom', value: ['foo'] })])], []);
    assert.deepEqual(
      shared.evaluate(customMessage({ a: 'foo' })).matches.map((m) => m.ruleId),
      ['c'],
    );
    assert.deepEqual(
      shared.evaluate(textMessage('foo')).matches.map((m) => m.ruleId),
      ['t'],
    );
  });
});

describe('compileMatcher: lists, rules and verdicts', () => {
  const lists = [list('swears', ['shit', 'Bollocks']), list('codes', ['\\bcode-\\d+\\b'], 'pattern'), list('empty', [])];

  it('reads the terms of referenced lists; an unknown id is ignored', () => {
    const byReference = { value: ['swears', 'missing'], isKeywordsReferencePresent: true };
    assertTexts(byReference, { BOLLOCKS: true, swears: false }, lists);
    assertTexts({ value: ['swears'] }, { 'he swears': true }, lists); // inline: the word itself
    assertTexts({ value: ['missing', 'empty'], isKeywordsReferencePresent: true }, { shit: false }, lists);
  });

  it("runs a pattern list's terms as patterns, even from a word condition", () => {
    assertTexts({ value: ['codes'], isKeywordsReferencePresent: true }, { 'use code-42 now': true, 'code-4x': false }, lists);
    assertTexts({ category: 'pattern', value: ['codes'], isKeywordsReferencePresent: true }, { 'code-42': true }, lists);
    assertTexts({ value: ['codes', 'swears'], isKeywordsReferencePresent: true }, { 'oh shit': true, 'code-1': true }, lists);
  });

  it('skips disabled rules', () => {
    const matcher = compileMatcher([rule('off', [condition({ value: ['shit'] })], ['dropMessage'], false)], []);
    assert.equal(matcher.evaluates, false);
    assert.deepEqual(matcher.evaluate(textMessage('shit')), { action: undefined, matches: [] });
  });

  it('never matches conditions Parley does not evaluate, and evaluates nothing when only those exist', () => {
    const unevaluated = [condition({ operand: 'image', value: ['AnyOf_greaterThan_30'] }), condition({ category: 'sentence', value: ['shit'] })];
    unevaluated.push(condition({ category: 'ai', value: ['shit'] }), condition({ operand: 'file', category: 'pattern', value: ['.*'] }));
    const matcher = compileMatcher([rule('media', unevaluated)], []);
    assert.equal(matcher.evaluates, false);
    assert.deepEqual(matcher.evaluate(textMessage('shit')).matches, []);
    const word = condition({ value: ['shit'] });
    const mixed = compileMatcher([rule('mixed', [...unevaluated, word])], []);
    assert.equal(mixed.evaluates, true);
    assert.equal(mixed.evaluate(textMessage('shit')).matches[0]?.condition, word);
  });

  it('drop wins over block; matches come in the order of the rules, each once, with its first matching condition', () => {
    const first = condition({ category: 'pattern', value: ['nomatch'] });
    const second = condition({ value: ['shit'] });
    const third = condition({ category: 'pattern', value: ['shit'] });
    const rules = [rule('block', [first, second, third]), rule('quiet', [condition({ value: ['shit'] })], [])];
    rules.push(rule('drop', [condition({ category: 'pattern', value: ['(?i)SH'] })], ['dropMessage']), rule('unmatched', [condition({ value: ['other'] })], ['dropMessage']));
    const matcher = compileMatcher(rules, []);
    const verdict = matcher.evaluate(textMessage('shit shit'));
    assert.equal(verdict.action, 'dropMessage');
    assert.deepEqual(
      verdict.matches.map((m) => m.ruleId),
      ['block', 'quiet', 'drop'],
    );
    assert.equal(verdict.matches[0]!.condition, second);
    assert.deepEqual(verdict.matches[0], { ruleId: 'block', ruleName: 'Rule block', revision: 3, condition: second, action: ['blockMessage'] });
    assert.equal(matcher.evaluate(textMessage('nomatch')).action, 'blockMessage');
    const quiet = compileMatcher([rules[1]!], []).evaluate(textMessage('shit'));
    assert.equal(quiet.action, undefined, 'a rule without actions matches, and does nothing');
    assert.equal(quiet.matches.length, 1);
    assert.deepEqual(matcher.evaluate(textMessage('fine')), { action: undefined, matches: [] }, 'nothing left over from the call before');
  });

  it('matches every contains condition that holds a word found, across rules', () => {
    const matcher = compileMatcher([rule('a', [condition({ value: ['x', 'y'] })]), rule('b', [condition({ value: ['y'] })]), rule('c', [condition({ value: ['z'] })])], []);
    assert.deepEqual(
      matcher.evaluate(textMessage('x y z')).matches.map((m) => m.ruleId),
      ['a', 'b', 'c'],
    );
    assert.deepEqual(matcher.evaluate(customMessage({ a: 'x y z' })).matches, []);
  });

  it('reports approximate bytes', () => {
    const matcher = compileMatcher([rule('a', [condition({ value: ['shit'] }), condition({ category: 'pattern', value: [EMAIL_PATTERN] })])], []);
    assert.ok(matcher.bytes > 1_000 && matcher.bytes < 1_000_000, String(matcher.bytes));
  });
});

describe('the built-in rules', () => {
  const enabled = BUILTIN_RULES.map((builtin) => ({ ...builtin, enabled: true }));
  const matcher = compileMatcher(enabled, BUILTIN_LISTS);
  const ruleIds = (message: MessageToModerate) => matcher.evaluate(message).matches.map((match) => match.ruleId);

  it('block profanity and slurs as whole words', () => {
    assert.deepEqual(ruleIds(textMessage('What the FUCK')), ['text-profanity-filter']);
    assert.deepEqual(ruleIds(textMessage('just piss off')), ['text-profanity-filter']);
    assert.deepEqual(ruleIds(customMessage({ caption: 'Bullshit!' })), ['custom-profanity-filter']);
    for (const word of PROFANITY_WORDS) assert.deepEqual(ruleIds(textMessage(`well, ${word.toUpperCase()}.`)), ['text-profanity-filter'], word);
  });

  it('let ordinary sentences through', () => {
    const ordinary = ['I could kill for a coffee', 'beat the traffic', 'Scunthorpe United won again', 'a cocktail in Middlesex'];
    ordinary.push('the therapist assessed the classic grape harvest', 'Dickens wrote about Penistone', 'shiitake mushrooms and a spicy dish');
    for (const text of ordinary) assert.deepEqual(ruleIds(textMessage(text)), [], text);
  });

  it('find e-mail addresses, phone numbers and links in text and custom data', () => {
    assert.deepEqual(ruleIds(textMessage('mail me: bob@example.com')), ['email_filter']);
    assert.deepEqual(ruleIds(customMessage({ contact: { phone: '415.555.2671' } })), ['contact_details_filter']);
    assert.deepEqual(ruleIds(textMessage('www.shop.example')), ['link_filter']);
  });
});

describe('compileMatcher at scale', () => {
  it('compiles 100,000 random keywords and finds them, and only them, as whole words', () => {
    const next = random(42);
    const keywords = Array.from({ length: 100_000 }, () => randomWord(next, 'abcdefghijklmnopqrstuvwxyz', 3, 12));
    const known = new Set(keywords);
    const matcher = compileMatcher([rule('big', [condition({ value: ['big'], isKeywordsReferencePresent: true })])], [list('big', keywords)]);
    assert.ok(matcher.bytes < 64 * 1024 * 1024, `${matcher.bytes} bytes`);
    const hit = (text: string) => matcher.evaluate(textMessage(text)).matches.length > 0;
    for (const index of [0, 1, 777, 50_000, 99_999]) {
      const keyword = keywords[index]!;
      assert.equal(hit(`some words then ${keyword.toUpperCase()}, and more`), true, keyword);
      assert.equal(hit(`glued${keyword}glued`), known.has(`glued${keyword}glued`), keyword);
    }
    let misses = 0;
    for (let i = 0; i < 200; i++) {
      const word = randomWord(next, 'abcdefghijklmnopqrstuvwxyz', 9, 12);
      if (known.has(word)) continue;
      misses++;
      assert.equal(hit(`1 ${word} 2`), false, word);
    }
    assert.ok(misses > 150);
  });
});
