import { describe, expect, it } from 'vitest';
import type { HookBody } from './hookBody.ts';
import { hookInputs } from './hookInputs.ts';

const input = (variable: string, type?: string) => ({
  id: variable,
  type: 'text_input' as const,
  config: { variable, ...(type ? { type } : {}) },
});
const json = (value: unknown, text = JSON.stringify(value)): HookBody => ({
  kind: 'json',
  value,
  text,
  raw: Buffer.from(text),
  headers: {},
  query: {},
});
const form = (value: Record<string, string>): HookBody => {
  const text = new URLSearchParams(value).toString();
  return { kind: 'form', value, text, raw: Buffer.from(text), headers: {}, query: {} };
};
const text = (t: string): HookBody => ({
  kind: 'text',
  value: t,
  text: t,
  raw: Buffer.from(t),
  headers: {},
  query: {},
});

type Nodes = Parameters<typeof hookInputs>[0];
const nodes = (...n: ReturnType<typeof input>[]) => n as unknown as Nodes;

describe('hookInputs', () => {
  it('keeps a body that is exactly the inputs', () => {
    expect(hookInputs(nodes(input('ticket')), json({ ticket: 'x' }))).toEqual({ ticket: 'x' });
    expect(hookInputs(nodes(input('event', 'object')), json({ event: { a: 1 } }))).toEqual({ event: { a: 1 } });
  });

  it('gives the whole body to a one-input workflow, per its type', () => {
    expect(hookInputs(nodes(input('ticket')), json({ a: 1 }, '{ "a": 1 }'))).toEqual({ ticket: '{ "a": 1 }' });
    expect(hookInputs(nodes(input('event', 'object')), json({ a: { b: [1] } }))).toEqual({ event: { a: { b: [1] } } });
    expect(hookInputs(nodes(input('event', 'object')), form({ a: '1' }))).toEqual({ event: { a: '1' } });
    expect(hookInputs(nodes(input('items', 'array')), json([1, 2]))).toEqual({ items: [1, 2] });
    expect(hookInputs(nodes(input('n', 'integer')), text('42'))).toEqual({ n: 42 });
    expect(hookInputs(nodes(input('n', 'integer')), text('many'))).toEqual({ n: 'many' });
    expect(hookInputs(nodes(input('ticket')), text('plain words'))).toEqual({ ticket: 'plain words' });
  });

  it('picks the named fields for several inputs, a form typed as text is', () => {
    const two = nodes(input('ticket'), input('priority', 'integer'));
    expect(hookInputs(two, json({ ticket: 'a', priority: 1, other: true }))).toEqual({ ticket: 'a', priority: 1 });
    expect(hookInputs(two, form({ ticket: 'a', priority: '2', other: 'x' }))).toEqual({ ticket: 'a', priority: 2 });
    expect(hookInputs(two, text('words'))).toEqual({});
  });
});
