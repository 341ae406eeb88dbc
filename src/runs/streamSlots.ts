// The run event streams open on this API process (eventStream.ts): bounded per API key and per
// user, and ended together when the process stops. One key held 4,884 streams on one run, and
// each read the store on every event: the bound keeps one caller from taking the
// process's connections from everyone else. A stop used to wait for every stream until its grace
// ran out (20 s, exit 1); now each stream ends at once with a hint to reconnect elsewhere.
import { Problem } from '../shared/errors.ts';

/** Retry-After of a refused stream: about when a client's other stream may have ended. */
export const STREAM_CAP_RETRY_SECONDS = 5;

/** What an open stream does when the process stops: tell its client to reconnect, and end. */
export type EndStream = () => void;

export interface StreamLimits {
  perKey: number;
  perUser: number;
}

export const tooManyEventStreams = (who: 'key' | 'user', limit: number) =>
  new Problem(
    'too_many_event_streams',
    who === 'key'
      ? `This API key has ${limit} event streams open, the most allowed (EVENT_STREAMS_PER_KEY); close one or retry later.`
      : `This user has ${limit} event streams open, the most allowed (EVENT_STREAMS_PER_USER); close one or retry later.`,
    { headers: { 'Retry-After': String(STREAM_CAP_RETRY_SECONDS) } },
  );

export class StreamSlots {
  private readonly perKey = new Map<number, number>();
  private readonly perUser = new Map<number, number>();
  private readonly open = new Set<EndStream>();
  private readonly limits: StreamLimits;
  private stopping = false;

  constructor(limits: StreamLimits) {
    this.limits = limits;
  }

  /**
   * Takes a slot for a stream of `keyId` (an API key; none for the console's, by session) and its
   * user, or throws 429 past either bound. Returns its release (call it once, however the stream ends). `end` is called when the
   * process stops; a stream that opens while it stops is ended at once.
   */
  take(keyId: number | undefined, userId: number, end: EndStream): () => void {
    const keys = keyId === undefined ? 0 : (this.perKey.get(keyId) ?? 0);
    const users = this.perUser.get(userId) ?? 0;
    if (keys >= this.limits.perKey) throw tooManyEventStreams('key', this.limits.perKey);
    if (users >= this.limits.perUser) throw tooManyEventStreams('user', this.limits.perUser);
    if (keyId !== undefined) this.perKey.set(keyId, keys + 1);
    this.perUser.set(userId, users + 1);
    this.open.add(end);
    if (this.stopping) queueMicrotask(end);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.open.delete(end);
      if (keyId !== undefined) decrement(this.perKey, keyId);
      decrement(this.perUser, userId);
    };
  }

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  /** The process stops: every open stream (and any opened from now on) ends, telling its client to reconnect. */
  endAll(): void {
    this.stopping = true;
    for (const end of [...this.open]) end();
  }
}

function decrement(counts: Map<number, number>, id: number): void {
  const n = (counts.get(id) ?? 1) - 1;
  if (n <= 0) counts.delete(id);
  else counts.set(id, n);
}
