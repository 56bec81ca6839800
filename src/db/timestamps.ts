import pg from 'pg';

const DIGIT_0 = 48;
const defaultParser = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date;

/**
 * Parses a timestamptz as PostgreSQL prints it: as text (`2026-11-23 13:08:48.464787+00`), or
 * inside JSON (`2026-11-23T13:08:48.464787+00:00`, see repositories/json-rows.ts), without the
 * regular expression of the driver's general parser: rows of lists carry several timestamps
 * each, and parsing them was ~6% of a list request. Anything unusual (years before 100, BC,
 * infinity) goes to the general parser.
 */
export function parseTimestamptz(text: string): Date {
  const separator = text.charCodeAt(10);
  if (text.length < 22 || text.charCodeAt(4) !== 45 || (separator !== 32 && separator !== 84) || text.charCodeAt(0) === DIGIT_0) {
    return general(text);
  }
  let ms = Date.UTC(Number(text.slice(0, 4)), Number(text.slice(5, 7)) - 1, Number(text.slice(8, 10)), Number(text.slice(11, 13)), Number(text.slice(14, 16)), Number(text.slice(17, 19)));
  let i = 19;
  if (text[i] === '.') {
    let end = i + 1;
    while (end < text.length && text.charCodeAt(end) >= DIGIT_0 && text.charCodeAt(end) <= DIGIT_0 + 9) end++;
    ms += Math.floor(Number(text.slice(i, end)) * 1000);
    i = end;
  }
  const sign = text[i];
  if (sign !== '+' && sign !== '-') return general(text);
  let offset = Number(text.slice(i + 1, i + 3)) * 3600;
  if (text[i + 3] === ':') offset += Number(text.slice(i + 4, i + 6)) * 60;
  if (text[i + 6] === ':') offset += Number(text.slice(i + 7, i + 9));
  if (i + 3 !== text.length && text[i + 3] !== ':') return general(text);
  ms -= (sign === '+' ? 1 : -1) * offset * 1000;
  return new Date(ms);
}

/** The driver's parser, which reads the text form only: JSON's `T` between date and time becomes a space. */
function general(text: string): Date {
  return defaultParser(text.length > 10 && text.charCodeAt(10) === 84 ? `${text.slice(0, 10)} ${text.slice(11)}` : text);
}
