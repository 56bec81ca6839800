import { RE2JS } from 're2js';
import { MODERATION_LIMITS } from './rules.js';

/**
 * Regular expressions of moderation rules and pattern lists, compiled by RE2JS: RE2's syntax and
 * its guarantee, matching in time linear in the text whatever the pattern (no backtracking, so no
 * pattern can make a send take seconds). What RE2 cannot promise linear time for (backreferences,
 * lookaround) it does not parse: such a pattern is refused when the rule or list is written.
 */
export interface CompiledPattern {
  /** Whether the pattern matches somewhere in the text (`contains`). */
  find(text: string): boolean;
  /** Whether it matches the whole text (`equals`). */
  matchesWhole(text: string): boolean;
}

/** Why RE2 refuses `source` (or it is too long), or undefined when it compiles. */
export function patternProblem(source: string): string | undefined {
  if (source.length === 0) return 'is empty';
  if (source.length > MODERATION_LIMITS.patternLength) return `is longer than ${MODERATION_LIMITS.patternLength} characters`;
  try {
    RE2JS.compile(source);
    return undefined;
  } catch (error) {
    return `is not a valid RE2 pattern (${(error as Error).message}); backreferences and lookaround are not supported`;
  }
}

/** Compiles a pattern that patternProblem accepted. */
export function compilePattern(source: string): CompiledPattern {
  const pattern = RE2JS.compile(source);
  return {
    find: (text) => pattern.matcher(text).find(),
    matchesWhole: (text) => pattern.matches(text),
  };
}

/** Patterns tried together (a condition's, or a pattern list's): the set matches when any one does. */
export interface CompiledPatternSet extends CompiledPattern {
  /** How many of the sources compiled (the others were left out). */
  readonly count: number;
  /** Approximate bytes the compiled programs hold. */
  readonly bytes: number;
}

/**
 * Sources joined into one alternation up to this length: one DFA pass over the text tries them
 * all, where separate patterns would read the text once each, while a huge alternation (a
 * pattern list may hold thousands) would grow a DFA whose states no longer fit its cache.
 */
const JOINED_SOURCE_LENGTH = 4_096;

/**
 * Measured on RE2JS 2.10 (heap after compiling and one test): ~4 KB per pattern and ~300 bytes
 * per program instruction. The lazy DFA may later grow its cache, bounded by RE2JS at 8 MB.
 */
const PATTERN_BASE_BYTES = 4_096;
const INSTRUCTION_BYTES = 300;

/**
 * Compiles `sources` as one set: those RE2 refuses are left out (rules are validated on write
 * with patternProblem: this is for a list written before a rule changed, never a throw on
 * send); undefined when none is left. Each source is wrapped in a group of its own, so its
 * flags (`(?i)`) and alternatives stay its own; a joined alternation that RE2 still refuses
 * (an unterminated `\Q`) falls back to its patterns one by one.
 */
export function compilePatternSet(sources: readonly string[]): CompiledPatternSet | undefined {
  const valid: CompiledSource[] = [];
  for (const source of sources) {
    const program = compiledOrUndefined(source);
    if (program) valid.push({ source, program });
  }
  if (valid.length === 0) return undefined;
  const programs = batches(valid).flatMap(joined);
  let bytes = 0;
  for (const program of programs) bytes += PATTERN_BASE_BYTES + INSTRUCTION_BYTES * program.programSize() + 2 * program.pattern().length;
  return {
    count: valid.length,
    bytes,
    find(text) {
      for (const program of programs) if (program.test(text)) return true;
      return false;
    },
    matchesWhole(text) {
      for (const program of programs) if (program.testExact(text)) return true;
      return false;
    },
  };
}

interface CompiledSource {
  source: string;
  program: RE2JS;
}

function compiledOrUndefined(source: string): RE2JS | undefined {
  if (source.length === 0 || source.length > MODERATION_LIMITS.patternLength) return undefined;
  try {
    return RE2JS.compile(source);
  } catch {
    return undefined;
  }
}

/** `sources` in consecutive runs whose joined length stays under JOINED_SOURCE_LENGTH (a longer source alone). */
function batches(sources: readonly CompiledSource[]): CompiledSource[][] {
  const runs: CompiledSource[][] = [];
  let run: CompiledSource[] = [];
  let length = 0;
  for (const compiled of sources) {
    if (run.length > 0 && length + compiled.source.length > JOINED_SOURCE_LENGTH) {
      runs.push(run);
      run = [];
      length = 0;
    }
    run.push(compiled);
    length += compiled.source.length + '(?:)|'.length;
  }
  runs.push(run);
  return runs;
}

/** One program for the run (its alternation), or its patterns' own when RE2 refuses the alternation. */
function joined(run: readonly CompiledSource[]): RE2JS[] {
  if (run.length === 1) return [run[0]!.program];
  try {
    return [RE2JS.compile(run.map(({ source }) => `(?:${source})`).join('|'))];
  } catch {
    return run.map(({ program }) => program);
  }
}
