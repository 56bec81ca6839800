/**
 * `work` run one at a time, never after `stopped`: a call while it runs makes it run once more
 * when it ends (the events or lanes it would look for may have arrived meanwhile). A failure is
 * reported and the next call runs it again.
 */
export function oneAtATime(work: () => Promise<void>, stopped: () => boolean, failed: (error: unknown) => void): { (): void; idle(): Promise<void> } {
  let running: Promise<void> | undefined;
  let again = false;
  const run = () => {
    if (stopped()) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await work();
        } while (again && !stopped());
      } catch (error) {
        failed(error);
      } finally {
        // In the same tick as the last look at `again`: a call after it starts a new run, one
        // before it made this one go round again. (Cleared in a .finally() instead, a call in
        // between was lost, and lanes waited for the periodic claim.)
        running = undefined;
      }
    })();
  };
  return Object.assign(run, { idle: async () => void (await running) });
}
