/** A small typed event emitter: `on` returns the function that removes the listener. */
export class Emitter<Events extends { [name: string]: unknown[] }> {
  private readonly listeners = new Map<keyof Events, Set<unknown>>();

  /** `onListenerError` hears what a listener throws; the other listeners still run. */
  constructor(private readonly onListenerError: (error: unknown) => void) {}

  on<K extends keyof Events>(name: K, listener: (...args: Events[K]) => void): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener);
    return () => this.off(name, listener);
  }

  off<K extends keyof Events>(name: K, listener: (...args: Events[K]) => void): void {
    this.listeners.get(name)?.delete(listener);
  }

  emit<K extends keyof Events>(name: K, ...args: Events[K]): void {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        (listener as (...args: Events[K]) => void)(...args);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
