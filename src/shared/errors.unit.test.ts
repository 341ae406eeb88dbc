import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROBLEM_CODES, type ProblemCode } from './errors.ts';

// The catalogue and the contract name the same problems: a code thrown here is one an integrator
// finds in openapi.yaml's Problem.code, and the spec lists no code the service never sends.

const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8'));
const specCodes: string[] = spec.components.schemas.Problem.properties.code['x-extensible-enum'];

describe('the problem catalogue against openapi.yaml', () => {
  it("lists exactly the catalogue's codes in Problem.code, each once", () => {
    expect(new Set(specCodes).size).toBe(specCodes.length);
    expect([...specCodes].sort()).toEqual(Object.keys(PROBLEM_CODES).sort());
  });

  it('gives every problem example of the spec a code of its own status', () => {
    const examples = Object.values(
      spec.components.responses as Record<
        string,
        { content?: Record<string, { examples?: Record<string, { value: unknown }> }> }
      >,
    )
      .flatMap((response) => Object.values(response.content?.['application/problem+json']?.examples ?? {}))
      .map(({ value }) => value as { status: number; code: ProblemCode });
    expect(examples.length).toBeGreaterThan(10);
    for (const { status, code } of examples) expect({ code, status: PROBLEM_CODES[code] }).toEqual({ code, status });
  });
});
