import { once } from 'node:events';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import { ImportClient, type BatchAnswer } from './import-client.js';
import { conversationWorker, KIND_INFO, KINDS, readLines, type RecordKind } from './jsonl-source.js';
import { Progress } from './progress.js';

/** Answers that mean "stored by an earlier run": what makes a re-run finish the job. */
export const ALREADY_IMPORTED = new Set(['ERR_UID_ALREADY_EXISTS', 'ERR_GUID_ALREADY_EXISTS', 'ERR_ALREADY_JOINED', 'ERR_ALREADY_BANNED', 'ERR_IMPORT_MUID_ALREADY_EXISTS']);

export interface ImportOptions {
  file: string;
  url: string;
  apiKey: string;
  ca?: string;
  batch: number;
  concurrency: number;
  attempts: number;
  reportFile: string;
  /** Where progress and log lines go (stderr): a bar when it is a terminal. */
  out: Writable & { isTTY?: boolean };
  /** Off a terminal: the least time between two progress lines (0: one per batch). */
  progressEveryMs?: number;
  /** Set when the user asks to stop (Ctrl-C): no new batch starts. */
  signal?: AbortSignal;
  /** After a stop, how long the calls in flight may take before they are abandoned. */
  stopGraceMs?: number;
  /** First retry delay (doubles per attempt, up to 30 s). */
  retryBaseDelayMs?: number;
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
  /** Records that failed, invalid lines included: the lines of the report. */
  failed: number;
  interrupted: boolean;
  /** Set when the import stopped because the server could not be reached, or refused the key. */
  unreachable?: { code: string; message: string };
  seconds: number;
}

interface Pending {
  line: number;
  key: string;
  record: Record<string, unknown>;
}

/** A worker's batch being filled; `keys` finds a repeated key without scanning. */
interface Batch {
  records: Pending[];
  keys: Set<string>;
}

const newBatch = (): Batch => ({ records: [], keys: new Set() });

/**
 * Streams a JSON-lines file to the data import API: users, then groups, members and messages,
 * each phase reading the file again (it is never held in memory), in batches from several
 * workers, each with one call in flight. A conversation's messages all go to one worker, in file
 * order. Records answered "already exists" count as skipped, so a re-run finishes an interrupted
 * import; the others that fail are written to the report file, one JSON line each. When the
 * server cannot be reached (retries exhausted, DNS, TLS), the import stops: those records were
 * not refused, and a re-run sends them again.
 */
export async function runImport(options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  // Opened at once, so that a report that cannot be written stops the import before it starts.
  const report = fs.createWriteStream(options.reportFile, { fd: fs.openSync(options.reportFile, 'w') });
  let failed = 0;
  const fail = (line: number, kind: string | undefined, key: string | undefined, code: string, message: string) => {
    failed++;
    report.write(`${JSON.stringify({ line, kind: kind ?? null, key: key ?? null, code, message })}\n`);
  };
  const totals = Object.fromEntries(KINDS.map((kind) => [kind, { imported: 0, skipped: 0, failed: 0 }])) as Record<RecordKind, KindTotals>;

  // Stops on the user's signal or when the server is unreachable.
  const halt = new AbortController();
  const onUserStop = () => halt.abort();
  options.signal?.addEventListener('abort', onUserStop, { once: true });
  if (options.signal?.aborted) halt.abort();
  const stopped = () => halt.signal.aborted;
  let unreachable: ImportSummary['unreachable'];
  // Resolves a grace period after a stop: calls still in flight then are abandoned.
  let graceTimer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => {
    const start = () => (graceTimer = setTimeout(resolve, options.stopGraceMs ?? 10_000));
    if (halt.signal.aborted) start();
    else halt.signal.addEventListener('abort', start, { once: true });
  });
  const untilDoneOrGaveUp = (work: Promise<unknown>) => Promise.race([work, gaveUp]);
  // Set once runImport returns: answers of abandoned calls arriving later are ignored.
  let finished = false;

  // A first pass counts each kind (for the progress total) and reports the lines that are not records.
  const counts = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<RecordKind, number>;
  let invalidLines = 0;
  for await (const parsed of readLines(options.file)) {
    if (stopped()) break;
    if ('invalid' in parsed) {
      invalidLines++;
      fail(parsed.line, parsed.kind, parsed.key, 'ERR_IMPORT_INVALID_LINE', parsed.invalid);
    } else counts[parsed.kind]++;
  }
  const progress = new Progress(
    options.out,
    KINDS.reduce((sum, kind) => sum + counts[kind], 0),
    options.progressEveryMs,
  );

  const client = new ImportClient({
    url: options.url,
    apiKey: options.apiKey,
    ca: options.ca,
    attempts: options.attempts,
    baseDelayMs: options.retryBaseDelayMs,
    signal: halt.signal,
    onRetry: (reason, delayMs) => progress.log(`retrying after ${reason} in ${Math.round(delayMs)} ms`),
  });
  try {
    for (const kind of KINDS) {
      if (stopped()) break;
      if (counts[kind] === 0) continue;
      progress.phase(kind);
      await importKind(kind);
    }
  } finally {
    finished = true;
    clearTimeout(graceTimer);
    options.signal?.removeEventListener('abort', onUserStop);
    client.close();
    progress.done();
    await new Promise<void>((resolve) => report.end(resolve));
  }
  return {
    totals,
    invalidLines,
    failed,
    interrupted: options.signal?.aborted ?? false,
    unreachable,
    seconds: (Date.now() - started) / 1000,
  };

  async function importKind(kind: RecordKind): Promise<void> {
    const workers = Math.max(1, options.concurrency);
    // Each worker fills its own batch and sends it while the reader goes on; the reader waits
    // when that worker's previous call is still in flight (so memory stays bounded).
    const batches: Batch[] = Array.from({ length: workers }, newBatch);
    const inFlight: Array<Promise<void>> = Array.from({ length: workers }, () => Promise.resolve());
    let next = 0;
    const flush = async (worker: number) => {
      const batch = batches[worker]!;
      if (batch.records.length === 0) return;
      batches[worker] = newBatch();
      await untilDoneOrGaveUp(inFlight[worker]!);
      if (!stopped()) inFlight[worker] = send(kind, batch.records);
    };
    for await (const parsed of readLines(options.file)) {
      if (stopped()) break;
      if ('invalid' in parsed || parsed.kind !== kind) continue;
      const worker = kind === 'message' ? conversationWorker(parsed.record, workers) : next++ % workers;
      // A key twice in one body would be merged by the JSON object: the repeat goes in the next call.
      if (batches[worker]!.keys.has(parsed.key)) await flush(worker);
      const batch = batches[worker]!;
      batch.records.push({ line: parsed.line, key: parsed.key, record: parsed.record });
      batch.keys.add(parsed.key);
      if (batch.records.length >= options.batch) await flush(worker);
    }
    for (let worker = 0; worker < workers; worker++) await flush(worker);
    await untilDoneOrGaveUp(Promise.all(inFlight));
  }

  async function send(kind: RecordKind, batch: Pending[]): Promise<void> {
    const info = KIND_INFO[kind];
    const records: Record<string, unknown> = {};
    for (const pending of batch) records[pending.key] = pending.record;
    let answer: BatchAnswer;
    try {
      answer = await client.post(info.path, info.wrapper, records);
    } catch (error) {
      // Not the records' fault, and maybe stored (a lost answer): not reported, a re-run resends them.
      if (!stopped()) {
        unreachable = { code: (error as { code?: string }).code ?? 'ERR_IMPORT_UNREACHABLE', message: (error as Error).message };
        halt.abort();
      }
      return;
    }
    if (finished) return;
    // A body over the server's size limit: the halves, in order (a conversation's order holds).
    if ('error' in answer && answer.status === 413 && batch.length > 1) {
      progress.log(`${batch.length} ${kind}s were too large for one call: sending them in two`);
      const half = Math.ceil(batch.length / 2);
      await send(kind, batch.slice(0, half));
      if (!stopped()) await send(kind, batch.slice(half));
      return;
    }
    // A key refused (wrong, revoked, or not fullAccess) fails every call alike: stop, not report each record.
    if ('error' in answer && (answer.status === 401 || answer.status === 403)) {
      if (!stopped()) {
        unreachable = { code: answer.error.code, message: answer.error.message };
        halt.abort();
      }
      return;
    }
    const tally = totals[kind];
    for (const pending of batch) {
      const result = 'results' in answer ? answer.results[pending.key] : undefined;
      const refusal = result && !result.success ? result.error : undefined;
      if (result?.success) tally.imported++;
      else if (refusal && ALREADY_IMPORTED.has(refusal.code)) tally.skipped++;
      else {
        tally.failed++;
        const error = refusal ?? ('error' in answer ? answer.error : { code: 'ERR_IMPORT_NO_RESULT', message: 'the server answered no result for this record' });
        fail(pending.line, kind, pending.key, error.code, error.message);
      }
    }
    progress.advance(batch.length);
    if (report.writableNeedDrain) await once(report, 'drain');
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
