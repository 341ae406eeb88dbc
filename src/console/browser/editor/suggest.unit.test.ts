import { describe, expect, it } from 'vitest';
import { acceptInExpression, acceptOffer, expressionQuery, offers, templateQuery } from './suggest.ts';

describe('templateQuery', () => {
  it('finds the path typed after an open {{', () => {
    expect(templateQuery('Hi {{', 5)).toEqual({ start: 5, partial: '' });
    expect(templateQuery('Hi {{ inp', 9)).toEqual({ start: 6, partial: 'inp' });
    expect(templateQuery('Hi {{- nodes.a.out', 18)).toEqual({ start: 7, partial: 'nodes.a.out' });
  });
  it('offers nothing outside braces, after a closed one, or past the path', () => {
    expect(templateQuery('Hi there', 8)).toBeNull();
    expect(templateQuery('{{ a }} b', 9)).toBeNull();
    expect(templateQuery('{{ a | up', 9)).toBeNull();
    expect(templateQuery('{{ a }} {{ b', 5)).toBeNull(); // the caret inside the first, past its path
  });
});

describe('offers', () => {
  const scope = ['inputs.ticket', 'nodes.classify.output', 'nodes.classify.output.category', 'run.id'];
  it('lists prefix matches first, then the paths containing the text, case-insensitively', () => {
    expect(offers(scope, '')).toEqual(scope);
    expect(offers(scope, 'nodes.c')).toEqual(['nodes.classify.output', 'nodes.classify.output.category']);
    expect(offers(scope, 'CAT')).toEqual(['nodes.classify.output.category']);
    expect(offers(scope, 'in')).toEqual(['inputs.ticket']);
  });
  it('drops the path already typed whole, and bounds the list', () => {
    expect(offers(scope, 'run.id')).toEqual([]);
    expect(
      offers(
        [...Array(30)].map((_, i) => `inputs.v${i}`),
        'inputs',
      ),
    ).toHaveLength(12);
  });
});

describe('acceptOffer', () => {
  it('writes the path and closes the braces, the caret after them', () => {
    expect(acceptOffer('Hi {{', 5, 5, 'inputs.ticket')).toEqual({ text: 'Hi {{ inputs.ticket }}', caret: 22 });
    expect(acceptOffer('Hi {{ inp!', 6, 9, 'inputs.ticket')).toEqual({ text: 'Hi {{ inputs.ticket }}!', caret: 22 });
  });
  it('keeps braces that already close it', () => {
    const r = acceptOffer('{{ nod }} end', 3, 6, 'nodes.a.output');
    expect(r.text).toBe('{{ nodes.a.output }} end');
    expect(r.text.slice(0, r.caret)).toBe('{{ nodes.a.output }}');
    const s = acceptOffer('{{ nod}}', 3, 6, 'nodes.a.output');
    expect(s.text).toBe('{{ nodes.a.output }}');
    expect(s.caret).toBe(s.text.length);
  });
});

describe('an expression field (no braces)', () => {
  it('completes the path at the caret, as typed', () => {
    expect(expressionQuery('nodes.cl', 8)).toEqual({ start: 0, partial: 'nodes.cl' });
    expect(expressionQuery('nodes.a.output | size', 21)).toBeNull();
    expect(acceptInExpression('nodes.cl', 0, 8, 'nodes.classify.output')).toEqual({
      text: 'nodes.classify.output',
      caret: 21,
    });
  });
});
