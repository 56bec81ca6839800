import fs from 'node:fs';
import { ImportClient, type BatchAnswer } from './import-client.js';
import { conversationWorker, KIND_INFO, KINDS, readLines, type RecordKind } from './jsonl-source.js';
import { Progress } from './progress.js';

/** Answers that mean "stored by an earlier run": what makes a re-run finish the job. */
export const ALREADY_IMPORTED = new Set([
  'ERR_UID_ALREADY_EXISTS',
  'ERR_GUID_ALREADY_EXISTS',
  'ERR_ALREADY_JOINED',
  'ERR_ALREADY_BANNED',
  'ERR_IMPORT_MUID_ALREADY_EXISTS',
]);

export interface ImportOptions {
  file: string;
  url: string;
  apiKey: string;
  ca?: string;
  batch: number;
  concurrency: number;
  attempts: number;
  reportFile: string;
  /** Where progress and log lines go (stderr). */
  out: NodeJS.WriteStream;
  /** Off a terminal: the least time between two progress lines (0: one per batch). */
  progressEveryMs?: number;
  /** Set when the user asks to stop (Ctrl-C): no new batch starts. */
  signal?: AbortSignal;
}

export interface KindTotals {
  imported: number;
  skipped: number;
  failed: number;
}

export interface ImportSummary {
  totals: Record<RecordKind, KindTotals>;
  /** Lines that are not records (bad JSON, unknown kind, no key). */
  invalidLines: number;
  interrupted: boolean;
  seconds: number;
}

interface Pending {
  line: number;
  key: string;
  record: Record<string, unknown>;
}

/**
 * Streams a JSON-lines file to the data import API: users, then groups, members and messages,
 * each phase reading the file again (it is never held in memory), in batches from several
 * workers. A conversation's messages all go to one worker, in file order. Records answered
 * "already exists" count as skipped, so a re-run finishes an interrupted import; the others
 * that fail are written to the report file, one JSON line each.
 */
export async function runImport(options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  const report = fs.createWriteStream(options.reportFile, { flags: 'w' });
  const fail = (line: number, kind: string | undefined, key: string | undefined, code: string, message: string) =>
    report.write(`${JSON.stringify({ line, kind: kind ?? null, key: key ?? null, code, message })}\n`);
  const totals = Object.fromEntries(KINDS.map((kind) => [kind, { imported: 0, skipped: 0, failed: 0 }])) as Record<RecordKind, KindTotals>;

  // A first pass counts each kind (for the progress total) and reports the lines that are not records.
  const counts = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<RecordKind, number>;
  let invalidLines = 0;
  for await (const parsed of readLines(options.file)) {
    if ('invalid' in parsed) {
      invalidLines++;
      fail(parsed.line, parsed.kind, parsed.key, 'ERR_IMPORT_INVALID_LINE', parsed.invalid);
    } else counts[parsed.kind]++;
  }
  const progress = new Progress(options.out, KINDS.reduce((sum, kind) => sum + counts[kind], 0), options.progressEveryMs);

  const client = new ImportClient({
    url: options.url,
    apiKey: options.apiKey,
    ca: options.ca,
    attempts: options.attempts,
    onRetry: (reason, delayMs) => progress.log(`retrying after ${reason} in ${Math.round(delayMs)} ms`),
  });
  const stopped = () => options.signal?.aborted ?? false;
  try {
    for (const kind of KINDS) {
      if (stopped()) break;
      if (counts[kind] === 0) continue;
      progress.phase(kind);
      await importKind(kind);
    }
  } finally {
    client.close();
    progress.done();
    await new Promise<void>((resolve) => report.end(resolve));
  }
  return { totals, invalidLines, interrupted: stopped(), seconds: (Date.now() - started) / 1000 };

  async function importKind(kind: RecordKind): Promise<void> {
    const info = KIND_INFO[kind];
    const workers = Math.max(1, options.concurrency);
    // Each worker fills its own batch and sends it while the reader goes on; the reader waits
    // when a worker already has a full batch in flight (backpressure: memory stays bounded).
    const batches: Pending[][] = Array.from({ length: workers }, () => []);
    const inFlight: Array<Promise<void>> = Array.from({ length: workers }, () => Promise.resolve());
    let next = 0;
    const flush = async (worker: number) => {
      const batch = batches[worker]!;
      if (batch.length === 0) return;
      batches[worker] = [];
      await inFlight[worker];
      inFlight[worker] = stopped() ? Promise.resolve() : send(kind, info, batch);
    };
    for await (const parsed of readLines(options.file)) {
      if (stopped()) break;
      if ('invalid' in parsed || parsed.kind !== kind) continue;
      const worker = kind === 'message' ? conversationWorker(parsed.record, workers) : next++ % workers;
      // A key twice in one batch would be merged by the JSON object: the repeat goes in the next one.
      if (batches[worker]!.some((pending) => pending.key === parsed.key)) await flush(worker);
      batches[worker]!.push({ line: parsed.line, key: parsed.key, record: parsed.record });
      if (batches[worker]!.length >= options.batch) await flush(worker);
    }
    for (let worker = 0; worker < workers; worker++) await flush(worker);
    await Promise.all(inFlight);
  }

  async function send(kind: RecordKind, info: (typeof KIND_INFO)[RecordKind], batch: Pending[]): Promise<void> {
    const records: Record<string, unknown> = {};
    for (const pending of batch) records[pending.key] = pending.record;
    let answer: BatchAnswer;
    try {
      answer = await client.post(info.path, info.wrapper, records);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'ERR_IMPORT_UNREACHABLE';
      answer = { error: { code, message: `gave up after ${options.attempts} attempts: ${(error as Error).message}` } };
    }
    const tally = totals[kind];
    for (const pending of batch) {
      const result = 'results' in answer ? answer.results[pending.key] : undefined;
      if (result?.success) tally.imported++;
      else if (result && ALREADY_IMPORTED.has(result.error.code)) tally.skipped++;
      else {
        tally.failed++;
        const error = result && !result.success ? result.error : 'error' in answer ? answer.error : { code: 'ERR_IMPORT_NO_RESULT', message: 'the server answered no result for this record' };
        fail(pending.line, kind, pending.key, error.code, error.message);
      }
    }
    progress.advance(batch.length);
  }
}

export function formatSummary(summary: ImportSummary): string {
  const lines = KINDS.map((kind) => {
    const t = summary.totals[kind];
    return `  ${`${kind}s`.padEnd(9)} ${String(t.imported).padStart(9)} imported ${String(t.skipped).padStart(9)} already there ${String(t.failed).padStart(7)} failed`;
  });
  const records = KINDS.reduce((sum, kind) => sum + summary.totals[kind].imported + summary.totals[kind].skipped + summary.totals[kind].failed, 0);
  const rate = summary.seconds > 0 ? Math.round(records / summary.seconds) : records;
  return [...lines, `  ${records} records in ${summary.seconds.toFixed(1)} s (${rate}/s)${summary.invalidLines ? `; ${summary.invalidLines} invalid lines` : ''}`].join('\n');
}
