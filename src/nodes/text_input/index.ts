import { defineNode } from '../types.ts';

export const textInput = defineNode({
  type: 'text_input',
  schema: 'TextInputNode',
  label: 'text input',
  docs: 'its output is the run input named by `variable`: a string, or a JSON value of its `type`, checked against its `schema`',
  source: true,
  noEdgeIn: 'a text_input takes only its run input',
});
