import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

/**
 * PGlite takes no lock on its data dir, and two processes on one dir silently lose writes.
 * This lock file (holding the owner's pid) makes a second process refuse to start. A lock
 * left by a process that no longer runs is taken over.
 */
export class DataDirLock {
  private constructor(private readonly file: string) {}

  static acquire(dir: string): DataDirLock {
    const file = path.join(dir, 'parley.lock');
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = fs.openSync(file, 'wx');
        fs.writeSync(fd, `${process.pid}\n`);
        fs.closeSync(fd);
        return new DataDirLock(file);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = readOwner(file);
        if (owner !== undefined && isRunning(owner)) {
          throw new DataDirLockedError(
            `The data dir ${dir} is in use by a running Parley process (pid ${owner}). ` +
              'Stop that process first, or point PARLEY_DATA_DIR at another directory. ' +
              'To run several processes on one database, use PostgreSQL (DATABASE_URL).',
          );
        }
        // Stale lock (its process is gone, or the file is unreadable): remove it and retry.
        fs.rmSync(file, { force: true });
      }
    }
    throw new DataDirLockedError(`Could not take the lock file ${file}.`);
  }

  /** The pid of the running process that holds the data dir's lock, if one does. */
  static runningOwner(dir: string): number | undefined {
    const owner = readOwner(path.join(dir, 'parley.lock'));
    return owner !== undefined && isRunning(owner) ? owner : undefined;
  }

  release(): void {
    if (readOwner(this.file) === process.pid) fs.rmSync(this.file, { force: true });
  }
}

function readOwner(file: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
