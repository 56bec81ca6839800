import { sql } from 'kysely';
import type { NotificationMutesTable } from '../../db/notification-preferences-tables.js';
import type { Executor } from '../../db/transaction.js';
import type { ConversationType } from '../../domain/notifications/preferences.js';

export type { NotificationMutesTable };

/** A muted conversation: its kind and target (the other user's uid, or the group's guid), until when (null: until unmuted). */
export interface MuteRow {
  kind: ConversationType;
  target: string;
  until: Date | null;
}

/** Conversations users muted (migration 0020): gone with the user, the user muted or the group muted (cascades). */
export class MutesRepository {
  constructor(private readonly db: Executor) {}

  /** The user's mutes on at `at`, in the order of their kinds and targets. */
  async list(appId: string, uid: string, at: Date, tx: Executor = this.db): Promise<MuteRow[]> {
    return tx
      .selectFrom('notification_mutes')
      .select(['kind', 'target', 'until'])
      .where('app_id', '=', appId)
      .where('uid', '=', uid)
      .where((eb) => eb.or([eb('until', 'is', null), eb('until', '>', at)]))
      .orderBy('kind')
      .orderBy('target')
      .execute();
  }

  /** The user's mute changes take turns until the transaction ends (so the per-user limit holds). */
  async lock(appId: string, uid: string, tx: Executor): Promise<void> {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`notification_mutes:${appId}:${uid}`}, 0))`.execute(tx);
  }

  /** Deletes the user's mutes that ended by `at`. */
  async removeEnded(appId: string, uid: string, at: Date, tx: Executor = this.db): Promise<void> {
    await tx.deleteFrom('notification_mutes').where('app_id', '=', appId).where('uid', '=', uid).where('until', '<=', at).execute();
  }

  async count(appId: string, uid: string, tx: Executor = this.db): Promise<number> {
    const row = await tx
      .selectFrom('notification_mutes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('app_id', '=', appId)
      .where('uid', '=', uid)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Mutes conversations (each once: the caller drops repeats), in one statement; a conversation
   * muted already takes the new `until`. A target that is not there rejects with ForeignKeyViolation.
   */
  async upsert(appId: string, uid: string, mutes: readonly MuteRow[], tx: Executor = this.db): Promise<void> {
    if (mutes.length === 0) return;
    const kinds = mutes.map((m) => m.kind);
    const targets = mutes.map((m) => m.target);
    const untils = mutes.map((m) => (m.until === null ? null : String(m.until.getTime())));
    await sql`
      insert into notification_mutes (app_id, uid, kind, target, until)
      select ${appId}, ${uid}, x.kind, x.target,
             case when x.until is null then null else timestamptz 'epoch' + x.until::bigint * interval '1 millisecond' end
        from unnest(${kinds}::text[], ${targets}::text[], ${untils}::text[]) as x(kind, target, until)
      on conflict (app_id, uid, kind, target) do update set until = excluded.until`.execute(tx);
  }

  /** Unmutes conversations; those not muted are no matter. */
  async remove(appId: string, uid: string, mutes: ReadonlyArray<Pick<MuteRow, 'kind' | 'target'>>, tx: Executor = this.db): Promise<void> {
    if (mutes.length === 0) return;
    await sql`
      delete from notification_mutes m
       using unnest(${mutes.map((x) => x.kind)}::text[], ${mutes.map((x) => x.target)}::text[]) as x(kind, target)
       where m.app_id = ${appId} and m.uid = ${uid} and m.kind = x.kind and m.target = x.target`.execute(tx);
  }

  /** Of these uids and guids, those the app does not have as an active user or a group. */
  async missingTargets(appId: string, uids: readonly string[], guids: readonly string[], tx: Executor = this.db): Promise<{ uids: string[]; guids: string[] }> {
    const { rows } = await sql<{ kind: 'user' | 'group'; id: string }>`
      select 'user' as kind, x.id from unnest(${[...uids]}::text[]) as x(id)
       where not exists (select 1 from users u where u.app_id = ${appId} and u.uid = x.id and u.deactivated_at is null)
      union all
      select 'group', x.id from unnest(${[...guids]}::text[]) as x(id)
       where not exists (select 1 from groups g where g.app_id = ${appId} and g.guid = x.id)`.execute(tx);
    return { uids: rows.filter((r) => r.kind === 'user').map((r) => r.id), guids: rows.filter((r) => r.kind === 'group').map((r) => r.id) };
  }
}
