import type { ProblemItem } from '../../shared/errors.ts';
import { defineNode } from '../types.ts';
import { inputSchema, schemaProblem } from '../valueSchemas.ts';

/** Its declared `schema`: only for an object or array input, and a JSON Schema. */
function schemaProblems(config: Record<string, unknown>): ProblemItem[] {
  if (config.schema === undefined) return [];
  if (config.type !== 'object' && config.type !== 'array')
    return [{ pointer: '/schema', message: 'is only for a text_input whose type is object or array' }];
  const problem = schemaProblem(config.schema);
  return problem ? [{ pointer: '/schema', message: problem }] : [];
}

export const textInput = defineNode({
  type: 'text_input',
  schema: 'TextInputNode',
  label: 'text input',
  docs: 'its output is the run input named by `variable`: a string, or a JSON value of its `type`, checked against its `schema`',
  output: inputSchema,
  runInput: (config) =>
    typeof config.variable === 'string'
      ? {
          variable: config.variable,
          type: typeof config.type === 'string' ? config.type : 'string',
          schema: inputSchema(config),
        }
      : undefined,
  configProblems: schemaProblems,
  source: true,
  noEdgeIn: 'a text_input takes only its run input',
});
