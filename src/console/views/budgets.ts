// A monthly budget in the console: what this month's runs cost against the limit, and the form that
// sets or removes it (the API's putWorkflowBudget / putApiKeyBudget and their deletes). On the
// workflow page as a section, and on its own page (a key's, or a refused form's).
import { html, type Html } from '../../html/html.ts';
import { layout } from '../../html/layout.ts';
import type { Budget } from '../../runs/monthlyBudgets.ts';
import type { PageUser } from './format.ts';
import { fieldError, formProblems, invalidAttrs, type FormProblem } from './form.ts';

export interface BudgetModel {
  user: PageUser;
  /** Where the form posts (`…/budget`; removing posts to `…/budget/delete`). */
  action: string;
  budget: Budget | undefined;
  /** The price table's currency; null: no price table, so no budget can be set. */
  currency: string | null;
  problems?: FormProblem[];
  /** What the user typed, shown again with the problem. */
  input?: string;
}

const day = (iso: string) => iso.slice(0, 10);

/** "Spent 3.417 of 10 USD this month (since 2026-11-01; resets 2026-12-01)". */
export function budgetSummary(budget: Budget | undefined): Html {
  if (!budget || budget.monthly_limit === null) return html`<span data-field="budget">No monthly budget</span>`;
  const spentAll = budget.remaining !== null && budget.remaining <= 0;
  const spent = spentAll ? html`<strong class="expired">${budget.spent}</strong>` : html`${budget.spent}`;
  return html`<span data-field="budget">Spent ${spent} of ${budget.monthly_limit} ${budget.currency} this month <small>(since ${day(budget.period_start)}; resets ${day(budget.period_end)})</small>${spentAll ? html` · <strong>new runs are refused until it resets</strong>` : ''}</span>`;
}

function budgetForm({ user, action, budget, currency, problems = [], input }: BudgetModel): Html {
  if (currency === null)
    return html`<p><small>No price table is configured, so runs have no cost and no budget can be set (operators: <code>MODEL_PRICES</code>).</small></p>`;
  const set = budget !== undefined && budget.monthly_limit !== null;
  const value = input ?? (set ? String(budget.monthly_limit) : '');
  return html`${formProblems(problems)}<form method="post" action="${action}" class="budget-form"><input type="hidden" name="csrf_token" value="${user.csrf}">
<label for="monthly_limit">Monthly limit (${currency})</label><input type="text" inputmode="decimal" id="monthly_limit" name="monthly_limit" value="${value}"${invalidAttrs(problems, 'monthly_limit')} required>${fieldError(problems, 'monthly_limit')}
<p class="hint"><small>Once this month's runs cost this much, new runs are refused until the month ends (UTC); a run already going finishes.</small></p>
<button type="submit" class="primary">${set ? 'Change budget' : 'Set budget'}</button></form>
${set ? html`<form method="post" action="${action}/delete"><input type="hidden" name="csrf_token" value="${user.csrf}"><button type="submit" class="danger">Remove budget</button></form>` : ''}`;
}

/** The workflow page's section. */
export const budgetSection = (model: BudgetModel): Html =>
  html`<section aria-labelledby="budget-heading"><h2 id="budget-heading">Monthly budget</h2><p>${budgetSummary(model.budget)}</p>${budgetForm(model)}</section>`;

/** A budget on its own page: an API key's, or a workflow's form refused. */
export const budgetPage = (
  model: BudgetModel & { title: string; back: { href: string; label: string }; current: string },
) =>
  layout(
    {
      title: model.title,
      user: model.user,
      current: model.current,
      mainAction: model.currency === null ? undefined : { id: 'monthly_limit', label: 'Set the budget' },
    },
    html`<p class="crumbs"><a href="${model.back.href}">${model.back.label}</a> /</p><h1>${model.title}</h1><p>${budgetSummary(model.budget)}</p>${budgetForm(model)}`,
  );
