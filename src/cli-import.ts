/**
 * `parley import FILE.jsonl --url URL --api-key KEY` (docs/import.md): a client of a running
 * server's data import API, run by cli.ts without any server configuration.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { CommandIo } from './cli-management.js';

export interface ImportFlags {
  url?: string;
  'api-key'?: string;
  batch?: string;
  concurrency?: string;
  report?: string;
  ca?: string;
  retries?: string;
}

/**
 * Imports `file`; progress, the summary and what to do next go to `out` (stderr). Ctrl-C and
 * SIGTERM stop it: no new batch starts, the calls in flight finish (exit 130).
 */
export async function importCommand(
  io: Pick<CommandIo, 'usage'>,
  flags: ImportFlags,
  file: string | undefined,
  extra: string[],
  out: Writable & { isTTY?: boolean } = process.stderr,
): Promise<number> {
  if (!file) throw io.usage('import needs the file to import: parley import FILE.jsonl --url URL --api-key KEY');
  if (extra.length) throw io.usage(`Unexpected arguments: ${extra.join(' ')}`);
  if (!fs.existsSync(file)) throw io.usage(`No such file: ${file}`);
  const required = (value: string | undefined, flag: string): string => {
    if (!value) throw io.usage(`--${flag} is required.`);
    return value;
  };
  const number = (flag: 'batch' | 'concurrency' | 'retries', fallback: number, max: number) => {
    const raw = flags[flag];
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1 || value > max) throw io.usage(`--${flag} must be an integer from 1 to ${max}.`);
    return value;
  };
  const url = required(flags.url, 'url');
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw io.usage('--url must be https://<app>.api-<region>.<domain>[:port] (or http:// behind a TLS proxy).');
  }
  const reportFile = flags.report ?? `${file}.failed.jsonl`;
  // The report is rewritten by each run: never over the file being imported.
  if (path.resolve(reportFile) === path.resolve(file)) throw io.usage('--report must not be the file to import.');
  if (!fs.existsSync(path.dirname(path.resolve(reportFile)))) throw io.usage(`No such directory for the report: ${reportFile}`);
  if (flags.ca !== undefined && !fs.existsSync(flags.ca)) throw io.usage(`No such CA file: ${flags.ca}`);
  const progressMs = process.env.PARLEY_IMPORT_PROGRESS_MS;
  const options = {
    file,
    url,
    apiKey: required(flags['api-key'], 'api-key'),
    ca: flags.ca === undefined ? undefined : fs.readFileSync(flags.ca, 'utf8'),
    batch: number('batch', 5_000, 10_000),
    concurrency: number('concurrency', 2, 64),
    attempts: number('retries', 8, 100),
    reportFile,
    out,
    progressEveryMs: progressMs && Number.isFinite(Number(progressMs)) ? Number(progressMs) : undefined,
  };
  const say = (line: string) => out.write(`${line}\n`);
  // Ctrl-C: no new batch starts, the calls in flight finish; a second one exits at once.
  const stop = new AbortController();
  const interrupt = () => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort();
    out.write('\nstopping: waiting for the calls in flight (Ctrl-C again to quit at once)\n');
  };
  process.on('SIGINT', interrupt);
  process.on('SIGTERM', interrupt);
  const { formatSummary, runImport } = await import('./import/importer.js');
  let summary: Awaited<ReturnType<typeof runImport>>;
  try {
    summary = await runImport({ ...options, signal: stop.signal });
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
  say(formatSummary(summary));
  if (summary.failed) say(`${summary.failed} records failed: see ${options.reportFile}`);
  const resume = 'Run the same command again to finish: records already imported are skipped.';
  if (summary.interrupted) {
    say(`Interrupted. ${resume}`);
    return 130;
  }
  if (summary.unreachable) {
    say(`Stopped: the server could not be reached or refused the key (${summary.unreachable.code}: ${summary.unreachable.message}). ${resume}`);
    return 1;
  }
  return summary.failed ? 1 : 0;
}
