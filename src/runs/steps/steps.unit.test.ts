// Each registered node type runs through its own step (src/runs/steps/<type>.ts), listed in
// index.ts: the compiler asks for the line, and this checks that the step is a module of its own.
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NODE_TYPES } from '../../nodes/registry.ts';
import type { WorkflowNode } from '../runState.ts';
import { stepOf } from './index.ts';

/** The step module of a type: `llm_call` runs in llmCall.ts. */
const stepFile = (type: string) => `./${type.replace(/_(\w)/g, (_, c: string) => c.toUpperCase())}.ts`;

describe('node steps', () => {
  it.each(NODE_TYPES.map((type) => [type]))('%s: has its step module, and a step that works', (type) => {
    expect(existsSync(new URL(stepFile(type), import.meta.url)), `src/runs/steps/${stepFile(type)}`).toBe(true);
    const step = stepOf({ id: 'n', type, config: {} } as unknown as WorkflowNode);
    expect(typeof step.work, `runs/steps/index.ts has a step for ${type}`).toBe('function');
  });
});
