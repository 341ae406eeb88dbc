import { defineNode } from '../types.ts';
import { httpRequestProblems, httpRequestTemplates } from './config.ts';

export const httpRequest = defineNode({
  type: 'http_request',
  schema: 'HttpRequestNode',
  label: 'HTTP request',
  docs: 'calls an HTTP API through the outbound guard; its text is the response body',
  templates: httpRequestTemplates,
  configProblems: httpRequestProblems,
  routable: true,
});
