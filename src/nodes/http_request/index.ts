import { defineNode } from '../types.ts';
import { ANY } from '../valueSchemas.ts';
import { httpRequestProblems, httpRequestTemplates, RESPONSE_OUTPUT } from './config.ts';

export const httpRequest = defineNode({
  type: 'http_request',
  schema: 'HttpRequestNode',
  label: 'HTTP request',
  docs: 'calls an HTTP API through the outbound guard; its output is the response body, or `{status, headers, body}` with `output: response`',
  templates: httpRequestTemplates,
  // With on_error: continue the output may be the error or `default` instead, so any value.
  output: (config) => (config.output === 'response' && config.on_error !== 'continue' ? RESPONSE_OUTPUT : ANY),
  configProblems: httpRequestProblems,
  routable: true,
});
