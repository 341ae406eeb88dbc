import type { Problem } from '../../shared/errors.ts';
import { html, layout } from '../html.ts';

/** The page a server-rendered path answers an error with. */
export const errorPage = (problem: Problem): string => layout({ title: problem.title }, html`<h1>${problem.title}</h1><p>${problem.message}</p>`);
