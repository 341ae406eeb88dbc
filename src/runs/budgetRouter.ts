// Routes of monthly budgets (openapi.yaml: getWorkflowBudget, putWorkflowBudget, deleteWorkflowBudget,
// getApiKeyBudget, putApiKeyBudget, deleteApiKeyBudget); the rules are monthlyBudgets.ts's.
import type { Request, Response } from 'express';
import type { operations } from '../../generated/api.d.ts';
import type { AppContext } from '../context.ts';
import type { Operations } from '../http/operations.ts';
import * as budgets from './monthlyBudgets.ts';
import { userOf, workflowIdOf } from './routeParams.ts';

type BudgetBody = operations['putWorkflowBudget']['requestBody']['content']['application/json'];
type BudgetAnswer = operations['getWorkflowBudget']['responses'][200]['content']['application/json'];

// The validator has checked it is an integer of the contract's range.
const tokenIdOf = (req: Request) => Number(req.params.token_id);

export function budgetOperations(ctx: AppContext): Operations {
  const limitOf = (req: Request) => (req.body as BudgetBody).monthly_limit;

  async function getWorkflowBudget(req: Request, res: Response<BudgetAnswer>) {
    res.status(200).json({ data: await budgets.getWorkflowBudget(ctx, userOf(req), workflowIdOf(req)) });
  }
  async function putWorkflowBudget(req: Request, res: Response<BudgetAnswer>) {
    res.status(200).json({ data: await budgets.putWorkflowBudget(ctx, userOf(req), workflowIdOf(req), limitOf(req)) });
  }
  async function deleteWorkflowBudget(req: Request, res: Response) {
    await budgets.deleteWorkflowBudget(ctx, userOf(req), workflowIdOf(req));
    res.status(204).end();
  }
  async function getApiKeyBudget(req: Request, res: Response<BudgetAnswer>) {
    res.status(200).json({ data: await budgets.getApiKeyBudget(ctx, userOf(req), tokenIdOf(req)) });
  }
  async function putApiKeyBudget(req: Request, res: Response<BudgetAnswer>) {
    res.status(200).json({ data: await budgets.putApiKeyBudget(ctx, userOf(req), tokenIdOf(req), limitOf(req)) });
  }
  async function deleteApiKeyBudget(req: Request, res: Response) {
    await budgets.deleteApiKeyBudget(ctx, userOf(req), tokenIdOf(req));
    res.status(204).end();
  }

  return {
    getWorkflowBudget,
    putWorkflowBudget,
    deleteWorkflowBudget,
    getApiKeyBudget,
    putApiKeyBudget,
    deleteApiKeyBudget,
  };
}
