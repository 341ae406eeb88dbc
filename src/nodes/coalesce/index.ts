import { defineNode } from '../types.ts';

export const coalesce = defineNode({
  type: 'coalesce',
  schema: 'CoalesceNode',
  label: 'coalesce',
  docs: 'its output is the first non-empty output of the edges followed into it: joins the branches of a `switch` or `condition`',
});
