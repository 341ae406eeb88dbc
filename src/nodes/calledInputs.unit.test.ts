// A call's mapping against the callee's run inputs: names it maps that the callee lacks, inputs of
// the callee it leaves unfilled; a call that maps nothing passes its upstream value to every input.
import { describe, expect, it } from 'vitest';
import { inputsMismatch, mismatchInWords } from './calledInputs.ts';

const named = (...variables: string[]) => variables.map((variable) => ({ variable, pointer: `/inputs/${variable}` }));

describe('inputsMismatch', () => {
  it('fits when the names mapped are exactly the inputs of the callee', () => {
    expect(inputsMismatch({ named: named('a', 'b'), pointer: '/inputs' }, ['b', 'a'])).toBeNull();
  });

  it('names a mapped name the callee lacks and an input of it left unmapped', () => {
    const mismatch = inputsMismatch({ named: named('ticket'), pointer: '/inputs' }, ['body']);
    expect(mismatch).toEqual({ unknown: [{ variable: 'ticket', pointer: '/inputs/ticket' }], unmapped: ['body'] });
    expect(mismatchInWords(mismatch!, ['body'])).toBe(
      'no input "ticket" (mapped here); input "body" not mapped here; its inputs are "body"',
    );
  });

  it('a pass-through call fills every input; an optional one is filled only when the callee has it', () => {
    expect(inputsMismatch({ named: [], passThrough: true, pointer: '' }, ['x', 'y'])).toBeNull();
    const item = { named: named('item'), optional: ['index'], pointer: '/workflow_id' };
    expect(inputsMismatch(item, ['item'])).toBeNull();
    expect(inputsMismatch(item, ['item', 'index'])).toBeNull();
    expect(inputsMismatch(item, ['index', 'other'])).toEqual({
      unknown: [{ variable: 'item', pointer: '/inputs/item' }],
      unmapped: ['other'],
    });
    expect(mismatchInWords(inputsMismatch(item, [])!, [])).toBe('no input "item" (mapped here); it has no inputs');
  });
});
