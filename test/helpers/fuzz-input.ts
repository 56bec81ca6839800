/**
 * The hostile values of the fuzz (fuzz.ts): a seeded generator, junk values of every JSON type,
 * and raw bodies and header values that JSON.stringify cannot make (malformed JSON, bytes that
 * are not UTF-8, numbers beyond a double, nesting thousands deep).
 */

/** A small seeded generator (mulberry32), so that a run is the same for the same seed. */
export interface Rng {
  next(): number;
  int(n: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
}

export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, chance: (p) => next() < p, pick: (items) => items[int(items.length)]! };
}

/** The generator of request `index` of a run: each request's own, so that one can be made again alone. */
export function requestRng(seed: number, index: number): Rng {
  return rng(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35));
}

/** Text PostgreSQL cannot store, or that is odd in other ways; JSON.stringify escapes it. */
export const NASTY_TEXT = [
  'a\u0000b',
  '\u0000',
  'x\ud800',
  '\udfff',
  '\ud83d',
  'ü漢字🚀',
  '\u202e\u200b',
  ' ',
  '',
  '%00',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "' or 1=1 --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a hostile input, not a template
  '${jndi:x}',
  'UPPER-Case_Id',
  'a,b,,c',
  '\\',
  '"',
  '\n\r\t',
];

/** Values of JSON's every type, for a field of any type. */
export const WRONG_TYPES: unknown[] = [null, true, false, 0, -1, 1.5, '', 'x', [], ['x'], [1, [2]], {}, { a: { b: [] } }];

/** Numbers at and beyond the edges of a double and of PostgreSQL's integers, as JS values. */
export const HUGE_VALUES: unknown[] = [2 ** 64, -(2 ** 63), 2 ** 31, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE, -0, 1e21, 0.1 + 0.2];

/** Numbers as JSON text: beyond a double (1e309), below its precision (1e-400), or 400 digits long. */
export const HUGE_NUMBER_TEXT = [
  '1e309',
  '-1e309',
  '1e-400',
  '-0',
  '18446744073709551616',
  '-9223372036854775809',
  '9'.repeat(400),
  `0.${'0'.repeat(400)}1`,
  '1E+999999999',
  '123456789012345678901234567890.5',
  '2147483648',
  '1.7976931348623157e309',
];

/** A value of a wrong type, a huge number, nasty text, a long string or array. */
export function junkValue(r: Rng): unknown {
  switch (r.int(6)) {
    case 0:
      return r.pick(WRONG_TYPES);
    case 1:
      return r.pick(HUGE_VALUES);
    case 2:
      return r.pick(NASTY_TEXT);
    case 3:
      return 'x'.repeat(r.pick([101, 256, 1001, 5121, 70_000]));
    case 4:
      return Array.from({ length: r.pick([26, 101, 1001, 10_001]) }, (_, i) => (r.chance(0.5) ? `u${i}` : i));
    default:
      return Object.fromEntries(Array.from({ length: r.pick([30, 300]) }, (_, i) => [`k${i}`, 'v'.repeat(r.int(40))]));
  }
}

/** JSON nesting `depth` deep: arrays, objects, or both in turn. */
export function deepJson(r: Rng, depth: number): string {
  const kind = r.int(3);
  const open = (i: number) => (kind === 0 || (kind === 2 && i % 2) ? '[' : '{"a":');
  const close = (i: number) => (kind === 0 || (kind === 2 && i % 2) ? ']' : '}');
  let text = '';
  for (let i = 0; i < depth; i++) text += open(i);
  text += '1';
  for (let i = depth - 1; i >= 0; i--) text += close(i);
  return text;
}

/** Bytes that are not UTF-8: a lone surrogate (CESU), overlong NUL and slash, stray continuation bytes, 0xFF. */
export const BAD_UTF8: Buffer[] = [
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xed, 0xbf, 0xbf]),
  Buffer.from([0xc0, 0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xe0, 0x80, 0x80]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
  Buffer.from([0x80]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
];

/** A placeholder that a body is serialised with, then replaced by hostile text that JSON.stringify cannot make. */
export const HOLE = '\u0001hole\u0001';
const HOLE_JSON = JSON.stringify(HOLE);

export interface RawBody {
  payload: Buffer | string | undefined;
  contentType: string | undefined;
  /** What was done, for the summary and a failure's replay. */
  family: string;
}

/**
 * A body as raw text or bytes. `json` is the body serialised, holding HOLE at one value when
 * `holed` (which this fills with a hostile literal), so that the rest of the body stays valid.
 */
export function rawBody(r: Rng, json: string, holed: boolean): RawBody {
  const asJson = (payload: Buffer | string, family: string): RawBody => ({ payload, contentType: 'application/json', family });
  const fill = (text: string) => (holed ? json.replace(HOLE_JSON, text) : json);
  const bytesIn = (bad: Buffer) => {
    const [before, after] = holed ? json.split(HOLE_JSON) : [`${json.slice(0, -1)}${json.length > 2 ? ',' : ''}"x":`, '}'];
    return Buffer.concat([Buffer.from(`${before}"a`), bad, Buffer.from(`b"${after ?? ''}`)]);
  };
  switch (r.int(12)) {
    case 0:
      return asJson(json.slice(0, r.int(Math.max(1, json.length - 1))), 'malformed: truncated');
    case 1:
      return asJson(`${json}${r.pick(['}', ',', 'x', ' {"a":1}', '\u0000', ']'])}`, 'malformed: trailing garbage');
    case 2:
      return asJson(r.pick(['', ' ', 'null', '"x"', '[]', '1', 'tru', '{', '{"a":}', "{'a':1}", '{"a":1,}', '\ufeff{}']), 'malformed: empty or not an object');
    case 3:
      return {
        payload: json,
        contentType: r.pick([
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          'application/json; charset=utf-16',
          'application/jsonx',
          '*/*',
          '',
        ]),
        family: 'malformed: wrong content type',
      };
    case 4:
      return { payload: json, contentType: undefined, family: 'malformed: no content type' };
    case 5:
      return asJson(bytesIn(r.pick(BAD_UTF8)), 'unicode: invalid UTF-8 bytes');
    case 6:
      return asJson(fill(r.pick(['"\\ud800"', '"\\udc00x"', '"a\\u0000"', '{"\\ud800":1}', '{"a\\u0000":1}', '"\\ud83d\\ud83d"'])), 'unicode: lone surrogate or NUL escapes');
    case 7:
      return asJson(fill(deepJson(r, r.pick([65, 65, 129, 5000]))), 'nesting: deep value');
    case 8:
      return asJson(deepJson(r, r.pick([64, 65, 5000, 100_000])), 'nesting: deep body');
    case 9:
      return asJson(fill(r.pick(HUGE_NUMBER_TEXT)), 'numbers: beyond a double');
    case 10:
      return asJson(fill(r.pick(['{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', '{"a":1,"a":2}'])), 'malformed: prototype keys and duplicates');
    default:
      return asJson(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]), 'unicode: byte order mark');
  }
}

/** Path segments that are not what the path names: encoded NUL, bytes that are not UTF-8, dots, 5,000 characters. */
export const PATH_JUNK = [
  '%00',
  'a%00b',
  '%ED%A0%80',
  '%C0%80',
  '%FF',
  '%E0%80%80',
  '..',
  '.',
  '%2e%2e',
  '%2F',
  'a%20b',
  '%25',
  'x'.repeat(5000),
  '%F0%9F%9A%80',
  'UPPER',
  '-1',
  '0',
  '99999999999999999999',
  '1e309',
  'NaN',
  'null',
  encodeURIComponent('ü漢字'),
];

/** Query values: the same, as text. */
export const QUERY_JUNK = [
  '',
  ' ',
  '\u0000',
  'x\ud800',
  '-1',
  '0',
  '-0',
  '1e309',
  '99999999999999999999',
  'NaN',
  'Infinity',
  'true',
  'null',
  'a,b,,c',
  'x'.repeat(3000),
  ...HUGE_NUMBER_TEXT.slice(0, 4),
];
