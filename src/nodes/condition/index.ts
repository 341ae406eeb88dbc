import { defineNode, keyTemplates } from '../types.ts';

export const condition = defineNode({
  type: 'condition',
  schema: 'ConditionNode',
  label: 'condition',
  docs: 'its text is `true` or `false`; edges out of it carry `"branch": "true"` or `"false"`',
  templates: keyTemplates('left', 'right'),
  branches: true,
});
