// The schedules' problems (codes in src/shared/errors.ts PROBLEM_CODES and openapi.yaml).
import { Problem } from '../shared/errors.ts';

export const scheduleNotFound = (id: string) => new Problem('schedule_not_found', `No schedule ${id}.`);
export const invalidSchedule = (pointer: string, message: string) =>
  new Problem('invalid_schedule', `The schedule cannot be read: ${message}`, { errors: [{ pointer, message }] });
export const tooManySchedules = (max: number) =>
  new Problem('too_many_schedules', `A workflow has at most ${max} schedules.`);
export const tooManyUserSchedules = (max: number) =>
  new Problem(
    'too_many_schedules',
    `A user has at most ${max} schedules across their workflows (USER_MAX_SCHEDULES): delete one first.`,
  );
