import type { MembershipChange } from './audience.js';

/**
 * The users of an app whose groups are being read as they connect (GatewayHub.attach), and the
 * membership changes the feed handed out meanwhile. A read sees the memberships as of some
 * moment, and the feed may hand out a change after that moment but before the connection joins
 * the app's index (where later changes reach it): such a change would be lost. So a connecting
 * user is noted here before the read, every change naming them (or deleting a group) is kept
 * while they are, and the read's groups are settled with those changes, in the log's order,
 * when the connection joins: a change the read saw already is applied again to the same effect,
 * one it did not see is applied once.
 */
export class PendingGroups {
  private readonly users = new Map<string, { readers: number; changes: Array<{ guid: string; member: boolean }> }>();

  /** A connection of `uid` starts reading the user's groups: call before the read. */
  begin(uid: string): void {
    const pending = this.users.get(uid);
    if (pending) pending.readers++;
    else this.users.set(uid, { readers: 1, changes: [] });
  }

  /** That connection joined the index, or gave up. */
  end(uid: string): void {
    const pending = this.users.get(uid);
    if (pending && --pending.readers === 0) this.users.delete(uid);
  }

  /** A change the feed handed out: kept for the users being read it concerns. */
  note(change: MembershipChange): void {
    if (this.users.size === 0) return;
    if (change.deleted) {
      for (const pending of this.users.values()) pending.changes.push({ guid: change.guid, member: false });
      return;
    }
    for (const uid of change.added ?? []) this.users.get(uid)?.changes.push({ guid: change.guid, member: true });
    for (const uid of change.removed ?? []) this.users.get(uid)?.changes.push({ guid: change.guid, member: false });
  }

  /** The groups read for `uid` (its read begun after begin()), with the changes handed out since, in order. */
  settle(uid: string, read: readonly string[]): string[] {
    const changes = this.users.get(uid)?.changes ?? [];
    if (changes.length === 0) return [...read];
    const groups = new Set(read);
    for (const { guid, member } of changes) {
      if (member) groups.add(guid);
      else groups.delete(guid);
    }
    return [...groups];
  }
}
