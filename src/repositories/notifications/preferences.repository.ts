import { sql } from 'kysely';
import type { NotificationUserPreferencesTable } from '../../db/notification-preferences-tables.js';
import type { Executor } from '../../db/transaction.js';
import type { ConversationType } from '../../domain/notifications/preferences.js';

export type { NotificationUserPreferencesTable };

/** A user's row: their own values (stored entries, domain/notifications/preferences-input.ts), time zone and contact details. */
export interface UserPreferencesRow {
  preferences: unknown;
  timezone: string | null;
  email: string | null;
  phone: string | null;
}

/** What the delivery engine reads of one recipient (recipients). */
export interface RecipientRow extends UserPreferencesRow {
  uid: string;
  /** The recipient muted the conversation, and the mute has not ended. */
  muted: boolean;
}

/** A change of contact details: a value sets the field, null clears it, undefined keeps it. */
export interface ContactChange {
  email?: string | null;
  phone?: string | null;
}

/**
 * Users' notification preferences, time zones and contact details (migration 0020): one row per
 * user who set any, gone with the user (a cascade).
 */
export class UserPreferencesRepository {
  constructor(private readonly db: Executor) {}

  async get(appId: string, uid: string, tx: Executor = this.db): Promise<UserPreferencesRow | undefined> {
    return tx.selectFrom('notification_user_preferences').select(['preferences', 'timezone', 'email', 'phone']).where('app_id', '=', appId).where('uid', '=', uid).executeTakeFirst();
  }

  /**
   * Merges entries into the user's stored values, in one statement (a field given replaces the
   * one stored; the others stay), and answers the values after. A user who is not there (deleted
   * meanwhile) rejects with ForeignKeyViolation.
   */
  async mergeValues(appId: string, uid: string, entries: Record<string, number | boolean>, tx: Executor = this.db): Promise<unknown> {
    const json = JSON.stringify(entries);
    const row = await tx
      .insertInto('notification_user_preferences')
      .values({ app_id: appId, uid, preferences: json })
      .onConflict((oc) =>
        oc.columns(['app_id', 'uid']).doUpdateSet({
          preferences: sql`notification_user_preferences.preferences || excluded.preferences`,
          updated_at: new Date(),
        }),
      )
      .returning('preferences')
      .executeTakeFirstOrThrow();
    return row.preferences;
  }

  /** Forgets the user's own values (their time zone and contact details stay). */
  async resetValues(appId: string, uid: string, tx: Executor = this.db): Promise<void> {
    await tx.updateTable('notification_user_preferences').set({ preferences: '{}', updated_at: new Date() }).where('app_id', '=', appId).where('uid', '=', uid).execute();
  }

  async setTimezone(appId: string, uid: string, timezone: string, tx: Executor = this.db): Promise<void> {
    await tx
      .insertInto('notification_user_preferences')
      .values({ app_id: appId, uid, timezone })
      .onConflict((oc) => oc.columns(['app_id', 'uid']).doUpdateSet({ timezone, updated_at: new Date() }))
      .execute();
  }

  /** Changes the contact details as `change` says, and answers them after. */
  async setContact(appId: string, uid: string, change: ContactChange, tx: Executor = this.db): Promise<{ email: string | null; phone: string | null }> {
    const set: { email?: string | null; phone?: string | null; updated_at: Date } = { updated_at: new Date() };
    if (change.email !== undefined) set.email = change.email;
    if (change.phone !== undefined) set.phone = change.phone;
    return tx
      .insertInto('notification_user_preferences')
      .values({ app_id: appId, uid, email: change.email ?? null, phone: change.phone ?? null })
      .onConflict((oc) => oc.columns(['app_id', 'uid']).doUpdateSet(set))
      .returning(['email', 'phone'])
      .executeTakeFirstOrThrow();
  }

  async deleteContact(appId: string, uid: string, tx: Executor = this.db): Promise<void> {
    await tx.updateTable('notification_user_preferences').set({ email: null, phone: null, updated_at: new Date() }).where('app_id', '=', appId).where('uid', '=', uid).execute();
  }

  /**
   * For the delivery engine, in one statement: of `uids`, the active users of the app, each with
   * their stored values, time zone, contact details, and whether they muted `conversation` (a
   * 1:1 conversation names the other user, a group its guid) with a mute still on at `at`. Users
   * who are not there, or deactivated, are left out.
   */
  async recipients(appId: string, uids: readonly string[], conversation: { type: ConversationType; id: string }, at: Date, tx: Executor = this.db): Promise<RecipientRow[]> {
    return this.recipientsIn(
      appId,
      uids.map((uid) => ({ uid, conversation })),
      at,
      tx,
    );
  }

  /**
   * recipients for many users, each in a conversation of their own (a round of deliveries of
   * many conversations), in one statement. Each row says which conversation it is about.
   */
  async recipientsIn(
    appId: string,
    wanted: ReadonlyArray<{ uid: string; conversation: { type: ConversationType; id: string } }>,
    at: Date,
    tx: Executor = this.db,
  ): Promise<Array<RecipientRow & { conversation: { type: ConversationType; id: string } }>> {
    if (wanted.length === 0) return [];
    const { rows } = await sql<RecipientRow & { kind: ConversationType; target: string }>`
      select u.uid, w.kind, w.target, coalesce(p.preferences, '{}'::jsonb) as preferences, p.timezone, p.email, p.phone,
             exists (select 1 from notification_mutes m
                      where m.app_id = u.app_id and m.uid = u.uid and m.kind = w.kind and m.target = w.target
                        and (m.until is null or m.until > ${at})) as muted
        from unnest(${wanted.map((w) => w.uid)}::text[], ${wanted.map((w) => w.conversation.type)}::text[], ${wanted.map((w) => w.conversation.id)}::text[]) as w (uid, kind, target)
        join users u on u.app_id = ${appId} and u.uid = w.uid and u.deactivated_at is null
        left join notification_user_preferences p on p.app_id = u.app_id and p.uid = u.uid`.execute(tx);
    return rows.map(({ kind, target, ...row }) => Object.assign(row, { conversation: { type: kind, id: target } }));
  }
}
