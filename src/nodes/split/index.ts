import type { ProblemItem } from '../../shared/errors.ts';
import { defineNode, keyTemplates } from '../types.ts';

/** Its options that belong to one way of splitting only, and an overlap less than the size. */
function optionProblems({ config }: { config: Record<string, unknown> }): ProblemItem[] {
  const problems: ProblemItem[] = [];
  if (config.by !== 'separator' && config.separator !== undefined)
    problems.push({ pointer: '/config/separator', message: 'is used only with "by": "separator"' });
  for (const key of ['size', 'overlap']) {
    if (config.by === 'separator' && config[key] !== undefined)
      problems.push({ pointer: `/config/${key}`, message: 'is used only with "by": "characters" or "tokens"' });
  }
  const size = typeof config.size === 'number' ? config.size : 1000;
  if (config.by !== 'separator' && typeof config.overlap === 'number' && config.overlap >= size)
    problems.push({ pointer: '/config/overlap', message: `must be less than size (${size})` });
  return problems;
}

export const split = defineNode({
  type: 'split',
  schema: 'SplitNode',
  label: 'split',
  docs: 'its output is a list made from the text (by separator, characters or tokens)',
  templates: keyTemplates('text'),
  upstreamOr: 'text',
  graphProblems: optionProblems,
});
