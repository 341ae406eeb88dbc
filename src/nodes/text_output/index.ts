import { defineNode } from '../types.ts';
import { TEXT } from '../valueSchemas.ts';

export const textOutput = defineNode({
  type: 'text_output',
  schema: 'TextOutputNode',
  label: 'text output',
  docs: "its text is the run's `output[<node id>]`, in its `format` (`plain`, `markdown` or `json`)",
  output: () => TEXT,
  result: true,
  // `format: json` parses the text: any JSON value.
  resultJsonSchema: (config) => (config.format === 'json' ? {} : { type: 'string' }),
  noEdgeOut: 'a text_output ends the graph',
});
