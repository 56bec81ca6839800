/**
 * Text folding for whole-word keyword matching: a message and a keyword are compared after both
 * are folded the same way, so that case, accents, ligatures and spacing do not let a word through
 * ("FÜCK", "fu\u0308ck", "ﬁne" and "piss   off" read as "fuck", "fuck", "fine", "piss off").
 *
 * Word characters are letters and digits of any script (\p{L}\p{N}): a keyword matches only where
 * the characters around it are not word characters, so "cunt" is not found in "Scunthorpe".
 */

/** Letters NFKD leaves whole (they are letters of their own, not a letter and a mark), spelled as ASCII. */
const UNDECOMPOSED: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  ı: 'i',
  ȷ: 'j',
  þ: 'th',
  ħ: 'h',
  ŧ: 't',
  ƒ: 'f',
};
const UNDECOMPOSED_LETTER = new RegExp(`[${Object.keys(UNDECOMPOSED).join('')}]`, 'g');

/**
 * What folding drops: combining marks (NFKD has split "é" into "e" and U+0301), and characters
 * that are invisible by definition (soft hyphen, zero-width space and joiners, variation
 * selectors, bidi controls), which would otherwise split a word without showing: "sh\u00ADit".
 */
const DROPPED = /[\p{M}\p{Default_Ignorable_Code_Point}]+/gu;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range, control characters included, on purpose
const ASCII_ONLY = /^[\x00-\x7f]*$/;
/** ASCII white space other than a space, or a run of spaces: the text needs collapsing (as it does with a space at an end). */
const ASCII_UNEVEN_SPACE = /[\t\n\v\f\r]| {2}/;
const SPACE = 0x20;
/** What collapsing replaces: runs of two or more, and single white space other than a space (single spaces, the most, stay as they are). */
const UNEVEN_SPACE = /\s{2,}|[^\S ]/g;

/**
 * `text` folded for whole-word matching: compatibility-decomposed (NFKD, so ligatures, full-width
 * and styled letters become plain ones), lower-cased, without combining marks or invisible
 * characters, with the letters NFKD does not decompose spelled out (ß→ss, æ→ae, ø→o, ł→l, þ→th…),
 * and each run of white space made one space, none at the ends. Folding a folded text changes
 * nothing. Linear in the text's length.
 */
export function foldText(text: string): string {
  // Most messages are ASCII: lower-casing is all they need, and the spacing rarely.
  if (ASCII_ONLY.test(text)) {
    const lower = text.toLowerCase();
    const even = !ASCII_UNEVEN_SPACE.test(lower) && lower.charCodeAt(0) !== SPACE && lower.charCodeAt(lower.length - 1) !== SPACE;
    return even ? lower : collapseSpace(lower);
  }
  // NFKD first: it can yield capitals (ℍ → H, Ⓐ → A), which lower-casing then folds; lower-casing
  // decomposed text yields no new composed letter (checked over every code point), and marks
  // must be split off before they can be dropped.
  const folded = text.normalize('NFKD').toLowerCase().replace(DROPPED, '').replace(UNDECOMPOSED_LETTER, spellOut);
  return collapseSpace(folded);
}

function spellOut(letter: string): string {
  return UNDECOMPOSED[letter] ?? letter;
}

function collapseSpace(text: string): string {
  return text.replace(UNEVEN_SPACE, ' ').trim();
}

/** For each ASCII code: 1 if it is a word character (a digit or a letter). */
const ASCII_WORD = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  ASCII_WORD[c] = /[A-Za-z0-9]/.test(ch) ? 1 : 0;
}
/** Sticky, so it tests the code point at lastIndex without slicing the text. */
const WORD_AT = /[\p{L}\p{N}]/uy;

/** Whether the code point starting at `index` of `text` is a word character (letter or digit); false past the end. */
export function isWordCharAt(text: string, index: number): boolean {
  if (index < 0 || index >= text.length) return false;
  const c = text.charCodeAt(index);
  if (c < 128) return ASCII_WORD[c] === 1;
  WORD_AT.lastIndex = index;
  return WORD_AT.test(text);
}

/** Whether the code point that ends just before `index` of `text` is a word character; false at the start. */
export function isWordCharBefore(text: string, index: number): boolean {
  if (index <= 0 || index > text.length) return false;
  let at = index - 1;
  const c = text.charCodeAt(at);
  if (c < 128) return ASCII_WORD[c] === 1;
  // The second half of a surrogate pair: the character starts one code unit earlier.
  if (c >= 0xdc00 && c <= 0xdfff && at > 0) {
    const high = text.charCodeAt(at - 1);
    if (high >= 0xd800 && high <= 0xdbff) at--;
  }
  return isWordCharAt(text, at);
}
