import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import type { BackupSummary } from './db/backup.js';
import type { Database } from './db/database.js';
import { DataDirLock, DataDirLockedError } from './db/data-dir-lock.js';
import { silentLogger } from './domain/context.js';

export const BACKUP_USAGE = `  backup FILE                    Write a backup of the embedded database (and the data dir's
                                 secret key) to FILE, consistent while the server runs; with
                                 DATABASE_URL set, use pg_dump instead (docs/deployment.md)
  restore FILE [--force]         Restore a backup into the data dir (the server stopped); --force
                                 moves a data dir that is not empty aside instead of refusing`;

interface BackupIo {
  usage(message: string): Error;
}

/**
 * `parley backup FILE` and `parley restore FILE [--force]` (docs/deployment.md#backups). Exit
 * codes: 0 done, 1 not done (the message says why: a server holds the data dir, the file is not
 * a backup, a file cannot be written), 2 a usage error or a deployment on PostgreSQL.
 */
export async function backupCommand(command: 'backup' | 'restore', config: Config, io: BackupIo, file: string | undefined, force: boolean): Promise<number> {
  if (!file) throw io.usage(`${command} needs a FILE`);
  if (config.databaseUrl) {
    console.error(
      command === 'backup'
        ? 'parley: this deployment uses PostgreSQL (DATABASE_URL): back it up with pg_dump (or WAL archiving); see docs/deployment.md#backups.'
        : 'parley: this deployment uses PostgreSQL (DATABASE_URL): restore a pg_dump with pg_restore; see docs/deployment.md#backups.',
    );
    return 2;
  }
  const target = path.resolve(file);
  // Loaded by the command (it loads the database engine), as the server's modules are.
  const { BackupError, restoreDataDir } = await import('./db/backup.js');
  try {
    if (command === 'backup') {
      const summary = await backup(config.dataDir, target);
      console.log(`Wrote ${summary.file} (${formatBytes(summary.bytes)}, migration ${summary.migration}, ${summary.createdAt}).`);
      return 0;
    }
    const restored = await restoreDataDir({ file: target, dataDir: config.dataDir, force, log: silentLogger });
    const { manifest } = restored;
    console.log(`Restored the backup of ${manifest.createdAt} (Parley ${manifest.parley}, migration ${manifest.migration}) into ${config.dataDir}.`);
    if (restored.movedAside) console.log(`The data dir that was there is kept in ${restored.movedAside}.`);
    return 0;
  } catch (error) {
    if (!(error instanceof BackupError)) throw error;
    console.error(`parley: ${error.message}`);
    return 1;
  }
}

/** Through the running server when there is one (its control socket), else by opening the data dir. */
async function backup(dataDir: string, file: string): Promise<BackupSummary> {
  const { NoServerError, requestBackup } = await import('./control-socket.js');
  try {
    return await requestBackup(dataDir, file);
  } catch (error) {
    if (!(error instanceof NoServerError)) throw error;
  }
  const [{ openDatabase }, { BackupError, writeBackup }] = await Promise.all([import('./db/database.js'), import('./db/backup.js')]);
  if (!fs.existsSync(path.join(dataDir, 'pglite', 'PG_VERSION'))) throw new BackupError(`There is no embedded database in ${dataDir} to back up.`);
  let database: Database;
  try {
    database = await openDatabase({ engine: 'pglite', dataDir, log: silentLogger });
  } catch (error) {
    const owner = error instanceof DataDirLockedError ? DataDirLock.runningOwner(dataDir) : undefined;
    if (owner === undefined) throw error;
    // A server holds it, but does not answer on its socket: still starting, or too long a path.
    throw new BackupError(`The data dir ${dataDir} is in use by a running Parley process (pid ${owner}) that does not answer on its control socket: wait until it listens, or stop it, and try again.`);
  }
  try {
    return await writeBackup(database, dataDir, file);
  } finally {
    await database.close();
  }
}

function formatBytes(bytes: number): string {
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
