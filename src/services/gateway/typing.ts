import { groupConversationKey, userConversationKey } from '../../domain/conversation-id.js';
import type { Logger } from '../../domain/context.js';
import { AppError } from '../../domain/errors.js';
import type { GatewayRepository } from '../../repositories/gateway/gateway.repository.js';
import type { BusMessage, GatewayBus } from './bus.js';
import { typingFrame } from './frames.js';
import type { GatewayHub } from './hub.js';

export interface TypingLimits {
  throttleMs: number;
  expiryMs: number;
  maxGroupSize: number;
}

interface Active {
  receiver: string;
  receiverType: 'user' | 'group';
  lastStart: number;
  expiry: NodeJS.Timeout;
}

/**
 * Typing indicators (docs/realtime.md, "Typing"): ephemeral, never stored. A start goes out at
 * most once per `throttleMs` per user and conversation, ends by itself after `expiryMs` (each
 * start within the throttle keeps it going), and ends when the user's last connection on this
 * node goes. A group larger than `maxGroupSize` gets none. Checked like a send: the receiver
 * exists and neither side blocked the other; the sender is a member of the group.
 */
export class Typing {
  private readonly active = new Map<string, Active>();
  /** A start's checks under way, by key: starts and ends that arrive meanwhile wait for it, so frames keep their order. */
  private readonly checking = new Map<string, Promise<void>>();

  constructor(
    private readonly deps: {
      hub: GatewayHub;
      bus: GatewayBus;
      gateway: GatewayRepository;
      limits: TypingLimits;
      log: Logger;
      now?: () => number;
    },
  ) {
    deps.bus.onMessage((message) => this.deliver(message));
    deps.hub.onLastConnection((appId, uid) => this.userGone(appId, uid));
  }

  /** `uid` started typing to the receiver. Throws the error a send there would (the frame's error answer). */
  async started(appId: string, uid: string, receiver: string, receiverType: 'user' | 'group'): Promise<void> {
    const key = activeKey(appId, uid, receiver, receiverType);
    const now = this.deps.now?.() ?? Date.now();
    const current = this.active.get(key);
    if (current && now - current.lastStart < this.deps.limits.throttleMs) {
      current.expiry.refresh();
      return;
    }
    if (!current) {
      let check = this.checking.get(key);
      if (!check) {
        const started = this.check(appId, uid, receiver, receiverType).finally(() => {
          if (this.checking.get(key) === started) this.checking.delete(key);
        });
        check = started;
        this.checking.set(key, check);
      }
      await check;
    }
    // Checked meanwhile by another start of the same user: that one goes out.
    const again = this.active.get(key);
    if (again && again !== current) return;
    if (current) {
      current.lastStart = now;
      current.expiry.refresh();
    } else {
      const expiry = setTimeout(() => this.end(key, appId, uid), this.deps.limits.expiryMs);
      expiry.unref();
      this.active.set(key, { receiver, receiverType, lastStart: now, expiry });
    }
    this.deps.bus.publish({ k: 'typing', app: appId, sender: uid, receiver, receiverType, on: true }, this.deps.log);
  }

  /** `uid` stopped typing there (nothing goes out if they were not typing). */
  ended(appId: string, uid: string, receiver: string, receiverType: 'user' | 'group'): void {
    const key = activeKey(appId, uid, receiver, receiverType);
    const check = this.checking.get(key);
    // After the starts sent before it (their check runs): an end never overtakes its start.
    if (check)
      void check.then(
        () => this.end(key, appId, uid),
        () => undefined,
      );
    else this.end(key, appId, uid);
  }

  private end(key: string, appId: string, uid: string): void {
    const current = this.active.get(key);
    if (!current) return;
    clearTimeout(current.expiry);
    this.active.delete(key);
    this.deps.bus.publish({ k: 'typing', app: appId, sender: uid, receiver: current.receiver, receiverType: current.receiverType, on: false }, this.deps.log);
  }

  private userGone(appId: string, uid: string): void {
    const prefix = `${appId}\u0000${uid}\u0000`;
    for (const key of [...this.active.keys()]) if (key.startsWith(prefix)) this.end(key, appId, uid);
  }

  private async check(appId: string, uid: string, receiver: string, receiverType: 'user' | 'group'): Promise<void> {
    if (receiverType === 'user') {
      if (receiver === uid) throw new AppError('ERR_BAD_REQUEST', { message: 'A user cannot type to themselves.' });
      const relation = await this.deps.gateway.userRelation(appId, uid, receiver);
      if (!relation.exists) throw new AppError('ERR_UID_NOT_FOUND', { params: { uid: receiver } });
      if (relation.blocked) throw new AppError('ERR_BLOCKED_RECEIVER', { params: { uid, receiver } });
      return;
    }
    if (!this.deps.hub.connectionsOf(appId)?.groupsOf(uid).has(receiver)) throw new AppError('ERR_GROUP_NOT_JOINED', { params: { uid, guid: receiver } });
    const size = await this.deps.gateway.groupSize(appId, receiver);
    if (size === undefined) throw new AppError('ERR_GUID_NOT_FOUND', { params: { guid: receiver } });
    if (size > this.deps.limits.maxGroupSize) throw new AppError('ERR_BAD_REQUEST', { message: `Typing is not shown in groups of more than ${this.deps.limits.maxGroupSize} members.` });
  }

  /** A typing message (this node's or another's): to the receiver's connections here, or the group's connected members but the sender. */
  private deliver(message: BusMessage): void {
    if (message.k !== 'typing') return;
    const connections = this.deps.hub.connectionsOf(message.app);
    if (!connections) return;
    const frame = typingFrame(message.on ? 'typing_started' : 'typing_ended', message.sender, message.receiver, message.receiverType);
    const targets = message.receiverType === 'user' ? [message.receiver] : connections.membersOf(message.receiver);
    for (const uid of targets) {
      if (uid === message.sender) continue;
      for (const attached of connections.users.get(uid) ?? []) if (!attached.held) attached.conn.write(frame);
    }
  }
}

function activeKey(appId: string, uid: string, receiver: string, receiverType: 'user' | 'group'): string {
  return `${appId}\u0000${uid}\u0000${receiverType === 'user' ? userConversationKey(uid, receiver) : groupConversationKey(receiver)}`;
}
