import { defineNode, keyTemplates } from '../types.ts';

export const split = defineNode({
  type: 'split',
  schema: 'SplitNode',
  label: 'split',
  docs: 'its output is a list made from the text (by separator, characters or tokens)',
  templates: keyTemplates('text'),
  upstreamOr: 'text',
});
