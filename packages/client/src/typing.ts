import type { ClientFrame, Conversation } from './protocol.js';
import { Timer, type Timers } from './timers.js';

export interface TypingOptions {
  /** At most one `typing_started` per conversation in this long (default 3 s, the server's own limit). */
  throttleMs?: number;
  /** `typing_ended` once no keystroke came for this long (default 5 s). */
  idleMs?: number;
}

interface Typing {
  conversation: Conversation;
  /** A `typing_started` was sent and no `typing_ended` since. */
  active: boolean;
  /** A keystroke came during the cooldown while not active: start when it ends. */
  startWhenCool: boolean;
  cooldown: Timer;
  idle: Timer;
}

/**
 * The typing indicators the client sends (README.md, "Typing"): `keystroke` on each change of the
 * draft, `stop` when the draft is sent or emptied. Starts are throttled per conversation, so a
 * start again within the throttle of the last one waits for it; an idle draft ends by itself.
 */
export class TypingThrottle {
  private readonly conversations = new Map<string, Typing>();
  private readonly throttleMs: number;
  private readonly idleMs: number;

  /** `send` answers whether the frame went out (false while not connected). */
  constructor(
    private readonly send: (frame: ClientFrame) => boolean,
    private readonly timers: Timers,
    options: TypingOptions = {},
  ) {
    this.throttleMs = options.throttleMs ?? 3_000;
    this.idleMs = options.idleMs ?? 5_000;
  }

  keystroke(conversation: Conversation): void {
    const typing = this.typing(conversation);
    typing.idle.start(this.idleMs, () => this.stop(conversation));
    if (typing.cooldown.pending) {
      if (!typing.active) typing.startWhenCool = true;
      return;
    }
    this.start(typing);
  }

  stop(conversation: Conversation): void {
    const key = keyOf(conversation);
    const typing = this.conversations.get(key);
    if (!typing) return;
    typing.idle.stop();
    typing.startWhenCool = false;
    if (typing.active) {
      typing.active = false;
      this.send({ type: 'typing_ended', receiver: conversation.receiver, receiverType: conversation.receiverType });
    }
    if (!typing.cooldown.pending) this.conversations.delete(key);
  }

  /** Forgets every indicator without a frame (the connection is gone: the server ends them). */
  reset(): void {
    for (const typing of this.conversations.values()) {
      typing.idle.stop();
      typing.cooldown.stop();
    }
    this.conversations.clear();
  }

  private start(typing: Typing): void {
    const { receiver, receiverType } = typing.conversation;
    if (!this.send({ type: 'typing_started', receiver, receiverType })) return;
    typing.active = true;
    typing.cooldown.start(this.throttleMs, () => this.cooled(typing));
  }

  private cooled(typing: Typing): void {
    if (typing.startWhenCool && typing.idle.pending) {
      typing.startWhenCool = false;
      this.start(typing);
    } else if (!typing.active && !typing.idle.pending) {
      this.conversations.delete(keyOf(typing.conversation));
    }
  }

  private typing(conversation: Conversation): Typing {
    const key = keyOf(conversation);
    let typing = this.conversations.get(key);
    if (!typing) {
      typing = {
        conversation: { receiver: conversation.receiver, receiverType: conversation.receiverType },
        active: false,
        startWhenCool: false,
        cooldown: new Timer(this.timers),
        idle: new Timer(this.timers),
      };
      this.conversations.set(key, typing);
    }
    return typing;
  }
}

const keyOf = (conversation: Conversation) => `${conversation.receiverType}:${conversation.receiver}`;
