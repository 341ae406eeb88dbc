import { defineNode, keyTemplates } from '../types.ts';
import { TEXT } from '../valueSchemas.ts';

export const condition = defineNode({
  type: 'condition',
  schema: 'ConditionNode',
  label: 'condition',
  docs: 'its text is `true` or `false`; edges out of it carry `"branch": "true"` or `"false"`',
  output: () => TEXT,
  templates: keyTemplates('left', 'right'),
  branches: true,
});
