import { defineNode, keyTemplates } from '../types.ts';

export const template = defineNode({
  type: 'template',
  schema: 'TemplateNode',
  label: 'template',
  docs: 'its text is the template rendered; no model is called',
  templates: keyTemplates('template'),
});
