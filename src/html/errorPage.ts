import type { Problem } from '../shared/errors.ts';
import { html, type Html } from './html.ts';
import { layout } from './layout.ts';

/** The page a server-rendered path answers an error with. */
export const errorPage = (problem: Problem): Html =>
  layout({ title: problem.title }, html`<h1>${problem.title}</h1><p>${problem.message}</p>`);
