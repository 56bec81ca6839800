/**
 * The fuzz's long mode: `npm run fuzz -- --requests 100000 [--seed N] [--engine pglite|postgres]
 * [--concurrency N] [--from I]`. The requests of test/api/bad-input-fuzz.test.ts (helpers/fuzz.ts),
 * as many as asked, through app.inject on a fresh database: a PGlite instance, or a PostgreSQL
 * database made on PARLEY_TEST_DATABASE_URL's server (postgres://postgres@127.0.0.1:5432/postgres
 * by default) and dropped at the end. Prints a summary; exits 1 on any 5xx, cross-app read or
 * error out of the vendor's shape.
 */
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '100000' },
    seed: { type: 'string', default: String(Date.now() % 1_000_000_000) },
    engine: { type: 'string', default: 'pglite' },
    concurrency: { type: 'string', default: '8' },
    from: { type: 'string', default: '0' },
    'reseed-every': { type: 'string', default: '5000' },
  },
});
const engine = values.engine;
if (engine !== 'pglite' && engine !== 'postgres') throw new Error(`--engine is pglite or postgres, not ${engine}`);
const number = (name: keyof typeof values) => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} takes a whole number, not ${values[name]}`);
  return value;
};
const seed = number('seed');
const requests = number('requests');
const concurrency = Math.max(1, number('concurrency'));

// The test helpers read the engine when they load.
process.env.PARLEY_TEST_DB = engine;
const { createTestApp } = await import('../test/helpers/app.js');
const { runFuzz, setupFuzz } = await import('../test/helpers/fuzz.js');

const t = await createTestApp({ rateLimits: { core: 0, standard: 0, import: 0 }, importConcurrency: { perServer: 64, perApp: 64 } });
let exitCode = 1;
try {
  const fuzz = await setupFuzz(t);
  console.log(`fuzz: seed ${seed}, ${requests} requests from #${number('from')}, ${fuzz.operations.length} operations, ${engine}, concurrency ${concurrency}`);
  const summary = await runFuzz(fuzz, {
    seed,
    requests,
    concurrency,
    from: number('from'),
    reseedEvery: Math.max(1, number('reseed-every')),
    keepFailures: 50,
    onProgress: (done, s) => console.log(`  ${done} requests, ${s.fivexx} 5xx, ${s.crossApp} cross-app, ${s.shape} out of shape`),
  });
  const sorted = (table: Record<string, number>) =>
    Object.entries(table)
      .sort((x, y) => y[1] - x[1])
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  for (const failure of summary.failures) console.log(`\nFAIL ${failure.kind}: ${failure.message}\n  replay: ${failure.replay}`);
  console.log(
    [
      '',
      `seed            ${seed} (${engine}, concurrency ${concurrency})`,
      `requests        ${summary.requests}`,
      `statuses        ${sorted(summary.statuses)}`,
      `5xx             ${summary.fivexx}`,
      `cross-app reads ${summary.crossApp}`,
      `out of shape    ${summary.shape}`,
      `list totals     ${summary.counts} other than their items (a page and its total read apart while others write; not a failure)`,
      `error codes     ${Object.keys(summary.errorCodes).length}: ${sorted(summary.errorCodes)}`,
      `families        ${sorted(summary.families)}`,
      `duration        ${(summary.durationMs / 1000).toFixed(1)} s (${Math.round(summary.requests / (summary.durationMs / 1000))} requests/s)`,
    ].join('\n'),
  );
  exitCode = summary.fivexx + summary.crossApp + summary.shape === 0 ? 0 : 1;
} finally {
  await t.close();
}
process.exit(exitCode);
