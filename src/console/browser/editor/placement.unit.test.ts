import { describe, expect, it } from 'vitest';
import { fieldFor } from './placement.ts';

describe('fieldFor', () => {
  const fields = [
    '/nodes/1/id',
    '/nodes/1/config/model',
    '/nodes/1/config/prompt',
    '/nodes/1/config/retry/max_attempts',
    '/nodes/1/config/response_format/json_schema/schema',
    '/nodes/3/config/headers',
    '/nodes/2/config/cases/0/value',
    '/edges/4/case',
  ];
  it('places a problem at the field of its pointer', () => {
    expect(fieldFor('/nodes/1/config/model', fields)).toBe('/nodes/1/config/model');
    expect(fieldFor('/nodes/1/config/retry/max_attempts', fields)).toBe('/nodes/1/config/retry/max_attempts');
    expect(fieldFor('/edges/4/case', fields)).toBe('/edges/4/case');
  });
  it('else at the nearest field enclosing it (a key inside a JSON box)', () => {
    expect(fieldFor('/nodes/3/config/headers/X-Key', fields)).toBe('/nodes/3/config/headers');
    expect(fieldFor('/nodes/1/config/response_format/json_schema/schema/properties/a', fields)).toBe(
      '/nodes/1/config/response_format/json_schema/schema',
    );
  });
  it('never at a field that only shares a prefix of its text, nor at one inside it', () => {
    expect(fieldFor('/nodes/1/config/prompts', fields)).toBeNull();
    expect(fieldFor('/nodes/11/config/model', fields)).toBeNull();
    expect(fieldFor('/nodes/1/config', fields)).toBeNull();
    expect(fieldFor('/nodes/2/config/cases/0', fields)).toBeNull();
    expect(fieldFor('/edges/4', fields)).toBeNull();
  });
});
