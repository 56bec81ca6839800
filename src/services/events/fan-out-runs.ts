import { oneAtATime } from './one-at-a-time.js';

/** A consumer's fan-out in this process (see fanOutRuns). */
export interface FanOutRuns {
  /** Fans out now (or once more when a run is under way). */
  now(): void;
  /** Fans out after the gather time, the calls meanwhile with it. */
  soon(): void;
  /** Drops a gather that waits. */
  cancel(): void;
  /** Resolves when no run is under way. */
  idle(): Promise<void>;
}

/**
 * The runs of one consumer's fan-out (`run`: its steps until the log's safe id): one at a time,
 * a call while one runs making it run once more; with `gatherMs`, `soon` waits that long so one
 * run takes the events of that time together. With `spareAfterMs`, a run still going after that
 * long gets a second one beside it: a step holds the cursors of the apps it reads (their rows
 * locked until it ends, and skipped by any other step), so the second fans out the other apps'
 * events meanwhile: one app's message to a huge group does not hold up the others' notifications.
 * Never more than the two.
 */
export function fanOutRuns(
  run: () => Promise<void>,
  options: { gatherMs?: number | undefined; spareAfterMs?: number | undefined; stopped: () => boolean; failed: (error: unknown) => void },
): FanOutRuns {
  const spare = oneAtATime(run, options.stopped, options.failed);
  const spareAfterMs = options.spareAfterMs;
  const main = oneAtATime(
    spareAfterMs === undefined
      ? run
      : async () => {
          const timer = setTimeout(() => spare(), spareAfterMs);
          timer.unref();
          try {
            await run();
          } finally {
            clearTimeout(timer);
          }
        },
    options.stopped,
    options.failed,
  );
  const gatherMs = options.gatherMs ?? 0;
  let gathering: NodeJS.Timeout | undefined;
  return {
    now: () => main(),
    soon: () => {
      if (gatherMs <= 0) return main();
      if (gathering) return;
      gathering = setTimeout(() => {
        gathering = undefined;
        main();
      }, gatherMs);
      gathering.unref();
    },
    cancel: () => {
      clearTimeout(gathering);
      gathering = undefined;
    },
    idle: async () => {
      await main.idle();
      await spare.idle();
    },
  };
}
