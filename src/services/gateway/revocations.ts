/**
 * Who is told that a user's access changed (docs/realtime.md, "Close codes"): a token deleted or
 * flushed (or pruned by a newer one), the user deactivated or deleted. The services that make
 * those changes call `revoked` once they have committed; the gateway then checks that user's
 * connections' tokens, on every node, and closes the revoked ones with 4002.
 */
export class Revocations {
  private readonly listeners: Array<(appId: string, uid: string) => void> = [];

  onRevoked(listener: (appId: string, uid: string) => void): void {
    this.listeners.push(listener);
  }

  revoked(appId: string, uids: readonly string[]): void {
    for (const uid of uids) for (const listener of this.listeners) listener(appId, uid);
  }
}
