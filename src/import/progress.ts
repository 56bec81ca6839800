/**
 * Import progress: on a terminal, one line redrawn in place (done/total, records/s, ETA);
 * otherwise a plain log line every few seconds, for CI logs and files.
 */
export class Progress {
  private done_ = 0;
  private current = '';
  private readonly started = Date.now();
  private lastLine = 0;
  private readonly tty: boolean;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly total: number,
    private readonly plainEveryMs: number = 2_000,
  ) {
    this.tty = Boolean(out.isTTY);
  }

  phase(kind: string): void {
    this.current = `${kind}s`;
    this.log(`importing ${this.current}`);
  }

  advance(records: number): void {
    this.done_ += records;
    const now = Date.now();
    if (this.tty) this.draw();
    else if (now - this.lastLine >= this.plainEveryMs) {
      this.lastLine = now;
      this.out.write(`${this.status()}\n`);
    }
  }

  /** A log line, above the bar on a terminal. */
  log(message: string): void {
    if (this.tty) this.out.write(`\r\x1b[2K${message}\n`);
    else this.out.write(`${message}\n`);
    if (this.tty) this.draw();
  }

  done(): void {
    if (this.tty) this.out.write('\n');
    else this.out.write(`${this.status()}\n`);
  }

  private draw(): void {
    const width = 30;
    const filled = this.total ? Math.round((this.done_ / this.total) * width) : width;
    this.out.write(`\r\x1b[2K[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.status()}`);
  }

  private status(): string {
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.done_ / seconds : 0;
    const eta = rate > 0 ? Math.max(0, (this.total - this.done_) / rate) : undefined;
    const percent = this.total ? Math.floor((this.done_ / this.total) * 100) : 100;
    return `${this.done_}/${this.total} records (${percent}%) ${this.current}, ${Math.round(rate)}/s, ETA ${eta === undefined ? '?' : `${Math.ceil(eta)} s`}`;
  }
}
