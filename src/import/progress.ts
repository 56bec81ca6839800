import type { Writable } from 'node:stream';

/**
 * Import progress: on a terminal, one line redrawn in place (done/total, records/s, ETA, phase);
 * otherwise a plain log line every few seconds, for CI logs and files.
 */
export class Progress {
  private records = 0;
  private current = '';
  private readonly started = Date.now();
  private lastLine = 0;
  private readonly tty: boolean;

  constructor(
    private readonly out: Writable & { isTTY?: boolean },
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
    this.records += records;
    const now = Date.now();
    if (this.tty) this.draw();
    else if (now - this.lastLine >= this.plainEveryMs) {
      this.lastLine = now;
      this.out.write(`${this.status()}\n`);
    }
  }

  /** A log line, above the bar on a terminal. */
  log(message: string): void {
    if (this.tty) {
      this.out.write(`\r\x1b[2K${message}\n`);
      this.draw();
    } else this.out.write(`${message}\n`);
  }

  done(): void {
    if (this.tty) this.out.write('\n');
    else this.out.write(`${this.status()}\n`);
  }

  private draw(): void {
    const width = 30;
    const filled = this.total ? Math.min(width, Math.round((this.records / this.total) * width)) : width;
    this.out.write(`\r\x1b[2K[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.status()}`);
  }

  private status(): string {
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.records / seconds : 0;
    const eta = rate > 0 ? Math.max(0, (this.total - this.records) / rate) : undefined;
    const percent = this.total ? Math.floor((this.records / this.total) * 100) : 100;
    return `${this.records}/${this.total} records (${percent}%) ${this.current}, ${Math.round(rate)}/s, ETA ${eta === undefined ? '?' : formatDuration(eta)}`;
  }
}

/** 42 s, 3m 07s, 2h 05m. */
export function formatDuration(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}
