import type { AudienceView } from './audience.js';
import type { GatewayConnection } from './frames.js';

/** A connection as the hub holds it: a resume buffers live frames until its catch-up is sent. */
export interface Attached {
  conn: GatewayConnection;
  /** The last durable event id sent (or covered by its start point). */
  lastId: bigint;
  /** Live frames held back while a resume's catch-up is sent, in order. */
  held: Array<{ id: bigint; eventId: string; frame: string }> | undefined;
}

/**
 * One app's connections on this node, indexed so that an event costs work in proportion to
 * its audience, not to the app's sockets: each user's connections, and each group's connected
 * members (the groups of each connected user, loaded when they connect and kept up to date from
 * the membership events the feed hands out, in the log's order).
 */
export class AppConnections implements AudienceView {
  readonly users = new Map<string, Set<Attached>>();
  private readonly members = new Map<string, Set<string>>();
  private readonly groupsOfUser = new Map<string, Set<string>>();
  count = 0;

  has(uid: string): boolean {
    return this.users.has(uid);
  }

  membersOf(guid: string): Iterable<string> {
    return this.members.get(guid) ?? [];
  }

  groupsOf(uid: string): ReadonlySet<string> {
    return this.groupsOfUser.get(uid) ?? new Set();
  }

  /** Adds a connection of `uid`; `groups` are the user's groups (read for their first connection). Answers whether it is the user's first here. */
  add(attached: Attached, groups: readonly string[]): boolean {
    const uid = attached.conn.uid;
    let own = this.users.get(uid);
    const first = own === undefined;
    if (!own) this.users.set(uid, (own = new Set()));
    own.add(attached);
    this.count++;
    if (first) for (const guid of groups) this.join(guid, uid);
    return first;
  }

  /** Removes a connection. Answers whether it was the user's last here. */
  remove(attached: Attached): boolean {
    const uid = attached.conn.uid;
    const own = this.users.get(uid);
    if (!own?.delete(attached)) return false;
    this.count--;
    if (own.size > 0) return false;
    this.users.delete(uid);
    for (const guid of this.groupsOfUser.get(uid) ?? []) this.leave(guid, uid);
    this.groupsOfUser.delete(uid);
    return true;
  }

  join(guid: string, uid: string): void {
    if (!this.users.has(uid)) return;
    let members = this.members.get(guid);
    if (!members) this.members.set(guid, (members = new Set()));
    members.add(uid);
    let groups = this.groupsOfUser.get(uid);
    if (!groups) this.groupsOfUser.set(uid, (groups = new Set()));
    groups.add(guid);
  }

  leave(guid: string, uid: string): void {
    const members = this.members.get(guid);
    members?.delete(uid);
    if (members?.size === 0) this.members.delete(guid);
    this.groupsOfUser.get(uid)?.delete(guid);
  }

  dropGroup(guid: string): void {
    for (const uid of this.members.get(guid) ?? []) this.groupsOfUser.get(uid)?.delete(guid);
    this.members.delete(guid);
  }
}
