import { defineNode } from '../types.ts';
import { caseNames, switchProblems } from './rules.ts';

export const switchNode = defineNode({
  type: 'switch',
  schema: 'SwitchNode',
  label: 'switch',
  docs: 'routes its upstream value down the first case that holds (else `default`); edges out of it carry `"case"`',
  // `value` is an expression: checked as the template `{{ value }}`.
  templates: (config) =>
    typeof config.value === 'string' ? [{ source: `{{ ${config.value} }}`, pointer: '/value' }] : [],
  configProblems: switchProblems,
  edgeCases: caseNames,
  caseList: 'cases',
});
