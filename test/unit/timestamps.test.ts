import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { parseTimestamptz } from '../../src/db/timestamps.js';

const general = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date;

describe('parseTimestamptz', () => {
  it('reads what PostgreSQL prints exactly as the driver’s general parser does', () => {
    for (const text of [
      '2026-11-23 13:08:48.464787+00',
      '2026-01-01 21:34:05+00',
      '2026-01-02 03:04:05+05:30',
      '1999-12-31 23:59:59.5-08',
      '2026-03-04 05:06:07.000001+00',
      '2026-03-04 05:06:07+05:45:30',
      '2024-02-29 23:59:59.999999-11',
      '0001-01-01 00:00:00+00',
      '0044-03-15 12:00:00+00 BC',
      'infinity',
      '-infinity',
    ]) {
      assert.equal(String(parseTimestamptz(text).valueOf()), String(general(text).valueOf()), text);
      // The same instant as JSON writes it (json-rows.ts): a T between date and time, the offset's minutes.
      const json = text.length > 10 ? `${text.slice(0, 10)}T${text.slice(11)}`.replace(/([+-]\d\d)$/, '$1:00') : text;
      assert.equal(String(parseTimestamptz(json).valueOf()), String(general(text).valueOf()), json);
    }
  });
});
