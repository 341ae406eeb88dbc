// The bounds on open event streams (streamSlots.ts): per API key and per user, freed
// when a stream ends, and every stream ended when the process stops.
import { describe, expect, it, vi } from 'vitest';
import { StreamSlots } from './streamSlots.ts';

describe('event stream slots', () => {
  it("refuses a stream past the key's bound or the user's with 429 too_many_event_streams and Retry-After, and frees a slot when a stream ends", () => {
    const slots = new StreamSlots({ perKey: 2, perUser: 3 });
    const a1 = slots.take(1, 10, () => {});
    slots.take(1, 10, () => {});
    expect(() => slots.take(1, 10, () => {})).toThrow(
      expect.objectContaining({ status: 429, code: 'too_many_event_streams', headers: { 'Retry-After': '5' } }),
    );
    slots.take(2, 10, () => {}); // another key of the same user: the user's third
    expect(() => slots.take(2, 10, () => {})).toThrow(/EVENT_STREAMS_PER_USER/);
    expect(() => slots.take(undefined, 10, () => {})).toThrow(/EVENT_STREAMS_PER_USER/); // the console's, by session
    slots.take(3, 11, () => {}); // another user is not affected
    a1();
    a1(); // released once, however often called
    slots.take(2, 10, () => {});
    expect(() => slots.take(1, 10, () => {})).toThrow(/EVENT_STREAMS_PER_USER/);
    expect(slots.size).toBe(4);
  });

  it('ends every open stream when the process stops, and one opened after at once', async () => {
    const slots = new StreamSlots({ perKey: 5, perUser: 5 });
    const ends = [vi.fn(), vi.fn()];
    slots.take(1, 10, ends[0]!);
    const release = slots.take(1, 10, ends[1]!);
    release();
    slots.endAll();
    expect(ends[0]).toHaveBeenCalledOnce();
    expect(ends[1]).not.toHaveBeenCalled(); // it had ended already
    const late = vi.fn();
    slots.take(1, 10, late);
    await Promise.resolve();
    expect(late).toHaveBeenCalledOnce();
  });
});
