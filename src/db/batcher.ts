/**
 * Coalesces concurrent single-row writes into multi-row statements: the application's own
 * group commit. Items submitted while the database is busy wait and go together in the next
 * batch; an idle system sends each item at once (after one turn of the event loop). Every
 * caller's promise settles only when its batch has committed, so an answer still means the
 * row is durably stored.
 *
 * `run` receives the items of one batch and returns one result per item, in order; a result
 * that is an Error rejects only that item's caller.
 */
export class Batcher<I, O> {
  private queue: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<Array<O | Error>>,
    private readonly options: { maxBatch: number; maxInFlight: number },
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.scheduled = false;
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      this.inFlight++;
      this.run(batch.map((entry) => entry.item))
        .then(
          (results) => {
            batch.forEach((entry, index) => {
              const result = results[index];
              if (result instanceof Error) entry.reject(result);
              else entry.resolve(result as O);
            });
          },
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.inFlight--;
          this.schedule();
        });
    }
  }
}
