/**
 * `parley messages backfill-texts` (docs/performance-log.md, "Stored message text"): gives the
 * messages stored before migration 0017 the stored text that history pages read, so that an old
 * history reads as fast as a new one. Run by cli.ts against the database: on PostgreSQL beside
 * running servers; the embedded database is the server's alone, so there with the server stopped.
 */
import type { Services } from './container.js';

export interface MessagesFlags {
  batch?: string;
}

export const MESSAGES_USAGE = `  messages backfill-texts [--batch 1000]
                                 Store the text history pages read for messages stored before
                                 it was kept (once, after an upgrade; safe to run again)`;

export async function messagesCommand(
  services: Services,
  io: { usage(message: string): Error },
  sub: string | undefined,
  flags: MessagesFlags,
  output: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  if (sub !== 'backfill-texts') throw io.usage('Usage: parley messages backfill-texts [--batch 1000]');
  const batch = flags.batch === undefined ? undefined : Number(flags.batch);
  if (batch !== undefined && !(Number.isSafeInteger(batch) && batch >= 1 && batch <= 100_000)) throw io.usage(`--batch must be a whole number from 1 to 100000; got "${flags.batch}"`);
  let reported = 0;
  const done = await services.messageTextBackfill.run({
    batch,
    onBatch: (progress) => {
      // A line per 100,000 messages read.
      if (progress.read - reported < 100_000) return;
      reported = progress.read;
      output(`${progress.read} messages read, ${progress.stored} texts stored`);
    },
  });
  output(`done: ${done.read} messages read, ${done.stored} texts stored`);
  return 0;
}
