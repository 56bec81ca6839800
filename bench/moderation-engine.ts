// Moderation engine micro-benchmark: compiling an app's keywords, and evaluating a message
// against them, in-process (no server, no database).
//
//   npm run bench:moderation            (tsx bench/moderation-engine.ts)
//
// Prints compile time and the matcher's `bytes` for 100,000 keywords (realistic words and random
// strings, 3–12 characters), and the mean time of one evaluate of a 1,000-character text with a
// few hits and with none: against those 100,000 keywords, against 10 rules of 1,000 keywords each
// plus 2 pattern conditions, and against 10, 1,000 and 10,000 keywords (the cost should not grow
// with the count).
import { EMAIL_PATTERN, LINK_PATTERN } from '../src/domain/moderation/builtins.js';
import { foldText } from '../src/domain/moderation/fold.js';
import { compileMatcher, type MessageToModerate, type ModerationMatcher } from '../src/domain/moderation/matcher.js';
import type { KeywordList, ModerationRule, RuleCondition } from '../src/domain/moderation/rules.js';

/** A deterministic generator of numbers in [0, 1) (mulberry32), so every run measures the same inputs. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    const t = Math.imul(state ^ (state >>> 15), 1 | state);
    const u = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((u ^ (u >>> 14)) >>> 0) / 4294967296;
  };
}
const next = random(2024);
const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;

/** Words messages are made of. */
const VOCABULARY = (
  'the be to of and a in that have it for not on with he as you do at this but his by from they we say her she or an will my ' +
  'one all would there their what so up out if about who get which go me when make can like time no just him know take people ' +
  'into year your good some could them see other than then now look only come its over think also back after use two how our ' +
  'work first well way even new want because any these give day most us great weather coffee meeting tomorrow morning evening ' +
  'friend family house street market city train station ticket window kitchen garden picture music movie party dinner lunch ' +
  'breakfast weekend holiday summer winter spring autumn happy quick brown lazy jump walk talk call send message phone email ' +
  'later soon maybe really thanks please sorry hello goodbye yes okay sure love nice cool funny crazy busy tired hungry ready'
).split(' ');
const SUFFIXES = ['s', 'ed', 'ing', 'er', 'ers', 'ly', 'ness', 'less', 'ful', 'ish', 'est', 'able'];
const PREFIXES = ['un', 're', 'over', 'under', 'pre', 'mis', 'out', 'super'];

function randomString(min: number, max: number): string {
  const length = min + Math.floor(next() * (max - min + 1));
  let word = '';
  for (let i = 0; i < length; i++) word += String.fromCharCode(97 + Math.floor(next() * 26));
  return word;
}

/**
 * `count` distinct keywords of 3–12 characters: a fifth realistic (the vocabulary's words with
 * prefixes and suffixes, so they share prefixes with the words messages hold, but are never
 * those words, as many as there are up to a fifth), the rest random strings.
 */
function keywords(count: number): string[] {
  const plain = new Set(VOCABULARY);
  const fits = (word: string) => word.length >= 3 && word.length <= 12 && !plain.has(word);
  const realistic: string[] = [];
  for (const word of VOCABULARY) {
    for (const suffix of SUFFIXES) {
      realistic.push(`${word}${suffix}`);
      for (const prefix of PREFIXES) realistic.push(`${prefix}${word}${suffix}`);
    }
  }
  const found = new Set<string>();
  for (const word of shuffled(realistic.filter(fits))) if (found.size < count / 5) found.add(word);
  while (found.size < count) {
    const word = randomString(3, 12);
    if (fits(word)) found.add(word);
  }
  return shuffled([...found]);
}

function shuffled<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** A text of about 1,000 characters of vocabulary words in sentences, with `hits` inserted. */
function text(hits: readonly string[]): string {
  const words: string[] = [];
  let length = 0;
  while (length < 1_000) {
    const word = pick(VOCABULARY);
    const sentenceEnd = next() < 0.1;
    words.push(sentenceEnd ? `${word}.` : word);
    length += word.length + 1;
  }
  hits.forEach((hit, i) => words.splice(Math.floor(((i + 1) * words.length) / (hits.length + 1)), 0, hit));
  return words.join(' ').slice(0, 1_000);
}

let conditionId = 0;
function condition(fields: Partial<RuleCondition>): RuleCondition {
  const base: RuleCondition = { id: ++conditionId, entity: 'message', operand: 'text', category: 'word', operator: 'contains', value: [], isKeywordsReferencePresent: false, isMediaPresent: false };
  return Object.assign(base, fields);
}
function rule(id: string, conditions: RuleCondition[]): ModerationRule {
  return { id, name: id, enabled: true, conditions, action: ['blockMessage'], revision: 1, createdAt: 0, updatedAt: 0 };
}
function list(id: string, searchTerms: string[]): KeywordList {
  return { id, name: id, category: 'word', isCSV: false, searchTerms, revision: 1, createdAt: 0, updatedAt: 0 };
}

/** One rule with one condition naming one list of `terms`. */
function oneList(terms: string[]): [ModerationRule[], KeywordList[]] {
  return [[rule('words', [condition({ value: ['words'], isKeywordsReferencePresent: true })])], [list('words', terms)]];
}

/** 10 rules, each naming a list of 1,000 of `terms`; the first two also have a pattern condition. */
function tenRules(terms: string[]): [ModerationRule[], KeywordList[]] {
  const rules: ModerationRule[] = [];
  const lists: KeywordList[] = [];
  for (let r = 0; r < 10; r++) {
    lists.push(list(`list-${r}`, terms.slice(r * 1_000, (r + 1) * 1_000)));
    const conditions = [condition({ value: [`list-${r}`], isKeywordsReferencePresent: true })];
    if (r < 2) conditions.push(condition({ category: 'pattern', value: [r === 0 ? EMAIL_PATTERN : LINK_PATTERN] }));
    rules.push(rule(`rule-${r}`, conditions));
  }
  return [rules, lists];
}

/** The median time of `runs` compilations, in ms, and the last matcher. */
function timeCompile(rules: ModerationRule[], lists: KeywordList[], runs: number): { ms: number; matcher: ModerationMatcher } {
  const times: number[] = [];
  let matcher: ModerationMatcher | undefined;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    matcher = compileMatcher(rules, lists);
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)]!, matcher: matcher! };
}

/** Mean µs of one call of `run`, after a warm-up: the best of a few rounds (the machine may be busy). */
function timeCall(run: () => unknown, iterations = 20_000, rounds = 5): number {
  for (let i = 0; i < 5_000; i++) run();
  let best = Infinity;
  for (let round = 0; round < rounds; round++) {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) run();
    best = Math.min(best, ((performance.now() - start) * 1_000) / iterations);
  }
  return best;
}

const size = (bytes: number) => (bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MB` : `${(bytes / 1024).toFixed(1)} KB`);
const message = (body: string): MessageToModerate => ({ category: 'message', type: 'text', data: { text: body } });

function main(): void {
  const all = keywords(100_000);
  // In the first list of the 10 rules, in the sixth, and only in the 100,000.
  const hitWords = [all[3]!, all[5_500]!, all[99_000]!];
  const withHits = message(text(hitWords));
  const withNone = message(text([]));

  const big = oneList(all);
  const bigCompile = timeCompile(...big, 5);
  const ten = tenRules(all);
  const tenCompile = timeCompile(...ten, 5);
  const small = oneList(all.slice(0, 10));
  const smallCompile = timeCompile(...small, 5);
  const thousand = timeCompile(...oneList(all.slice(0, 1_000)), 5);
  const tenThousand = timeCompile(...oneList(all.slice(0, 10_000)), 5);

  // Each case must find what it should, or its time means nothing.
  const check = (matcher: ModerationMatcher, body: MessageToModerate, expected: boolean, label: string) => {
    const found = matcher.evaluate(body).matches.length > 0;
    if (found !== expected) throw new Error(`${label}: expected ${expected ? 'a match' : 'no match'}`);
  };
  check(bigCompile.matcher, withHits, true, '100,000 keywords, hits');
  check(bigCompile.matcher, withNone, false, '100,000 keywords, none');
  check(tenCompile.matcher, withNone, false, '10 rules, none');
  check(smallCompile.matcher, withNone, false, '10 keywords, none');
  check(tenThousand.matcher, withHits, true, '10,000 keywords, hits');

  const rows: [string, string, string, string, string][] = [];
  const row = (label: string, compiled: { ms: number; matcher: ModerationMatcher }) => {
    const evaluate = (body: MessageToModerate) => timeCall(() => compiled.matcher.evaluate(body)).toFixed(2);
    const matched = compiled.matcher.evaluate(withHits).matches.length;
    const hits = `${evaluate(withHits)} (${matched} rule${matched === 1 ? '' : 's'})`;
    rows.push([label, compiled.ms.toFixed(1), size(compiled.matcher.bytes), hits, evaluate(withNone)]);
  };
  row('10 keywords, 1 rule', smallCompile);
  row('1,000 keywords, 1 rule', thousand);
  row('10,000 keywords, 1 rule', tenThousand);
  row('100,000 keywords, 1 rule', bigCompile);
  row('10 rules × 1,000 keywords + 2 patterns', tenCompile);
  const fold = timeCall(() => foldText(withNone.data.text as string)).toFixed(2);

  const header: [string, string, string, string, string] = ['matcher', 'compile ms', 'bytes', 'µs/evaluate (hits)', 'µs/evaluate (no hit)'];
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(`Moderation engine: evaluate of a ${(withNone.data.text as string).length}-character text (node ${process.version})`);
  console.log(line(header));
  for (const cells of rows) console.log(line(cells));
  console.log(`(folding the text alone: ${fold} µs)`);
}

main();
