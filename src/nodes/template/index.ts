import { defineNode, keyTemplates } from '../types.ts';
import { TEXT } from '../valueSchemas.ts';

export const template = defineNode({
  type: 'template',
  schema: 'TemplateNode',
  label: 'template',
  docs: 'its text is the template rendered; no model is called',
  output: () => TEXT,
  templates: keyTemplates('template'),
});
