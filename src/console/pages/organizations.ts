import { Router, type Request, type Response } from 'express';
import type { AppContext } from '../../context.ts';
import { invalidField } from '../../shared/errors.ts';
import {
  addMember,
  createOrg,
  getOrgWithMembers,
  listOrgsWithRoleForUser,
  removeMember,
  type Role,
} from '../../accounts/orgs.ts';
import { confirmPage } from '../views/confirm.ts';
import type { PageUser } from '../views/format.ts';
import type { FormProblem } from '../views/form.ts';
import { organizationPage, organizationsPage, type MemberInput, type OrgInput } from '../views/organizations.ts';
import { doneMessage, field, formProblemsOf, notFoundPage, pageUser, refusedWith, sendPage } from './common.ts';
import { messagePage } from '../views/message.ts';

// /settings/organizations: the user's organizations, creating one, and its members (owners add and
// remove them; a member can leave). Organizations the user is not in answer 404, as in the API.

async function showOrgs(
  ctx: AppContext,
  res: Response,
  status: number,
  user: PageUser,
  problems: FormProblem[] = [],
  input?: OrgInput,
  flash?: string,
): Promise<void> {
  sendPage(
    res,
    status,
    organizationsPage({ user, orgs: await listOrgsWithRoleForUser(ctx, user.id), problems, input, flash }),
  );
}

/**
 * A member the user may remove (an owner, anyone; a member, themselves), with the org; or the 404
 * page is sent and undefined returned.
 */
async function removalOrNotFoundPage(ctx: AppContext, res: Response, user: PageUser, namespace: string, login: string) {
  const found = await membershipOf(ctx, user, namespace);
  if (!found) return void sendPage(res, 404, notFoundPage(user, 'organization'));
  const member = found.members.find((m) => m.login === login);
  const self = member?.user_id === user.id;
  if (!member || (!self && found.role !== 'owner')) return void sendPage(res, 404, notFoundPage(user, 'member'));
  return { found, member, self };
}

/** The org and the user's role in it, or undefined when it does not exist or the user is not a member. */
async function membershipOf(ctx: AppContext, user: PageUser, namespace: string) {
  try {
    const { org, members } = await getOrgWithMembers(ctx, namespace);
    const me = members.find((m) => m.user_id === user.id);
    return me ? { org, members, role: me.role as Role } : undefined;
  } catch (err) {
    refusedWith(err, 400, 404);
    return undefined;
  }
}

async function showOrg(
  ctx: AppContext,
  req: Request,
  res: Response,
  status: number,
  user: PageUser,
  problems: FormProblem[] = [],
  input?: MemberInput,
  flash?: string,
): Promise<void> {
  const found = await membershipOf(ctx, user, String(req.params.namespace));
  if (!found) return sendPage(res, 404, notFoundPage(user, 'organization'));
  sendPage(res, status, organizationPage({ user, ...found, problems, input, flash }));
}

export function organizationsRouter(ctx: AppContext): Router {
  const router = Router();
  organizationRoutes(router, ctx);
  memberRoutes(router, ctx);
  return router;
}

/** Listing, creating and showing the user's organizations. */
function organizationRoutes(router: Router, ctx: AppContext): void {
  router.get('/settings/organizations', async (req, res) => {
    await showOrgs(ctx, res, 200, await pageUser(ctx, req), [], undefined, doneMessage(req));
  });

  router.post('/settings/organizations', async (req, res) => {
    const user = await pageUser(ctx, req);
    const input: OrgInput = { namespace: field(req, 'namespace'), name: field(req, 'name') };
    try {
      const org = await createOrg(ctx, { ...input, ownerLogin: user.login });
      res.redirect(303, `/settings/organizations/${org.namespace}?done=org-created`);
    } catch (err) {
      const problem = refusedWith(err, 400, 409);
      // A taken namespace (409) is about that field.
      await showOrgs(
        ctx,
        res,
        problem.status,
        user,
        problem.status === 409 ? [{ field: 'namespace', message: problem.message }] : formProblemsOf(problem),
        input,
      );
    }
  });

  router.get('/settings/organizations/:namespace', async (req, res) => {
    await showOrg(ctx, req, res, 200, await pageUser(ctx, req), [], undefined, doneMessage(req));
  });
}

/** Adding members (owners) and removing them or leaving, after a confirm page. */
function memberRoutes(router: Router, ctx: AppContext): void {
  router.post('/settings/organizations/:namespace/members', async (req, res) => {
    const user = await pageUser(ctx, req);
    const found = await membershipOf(ctx, user, String(req.params.namespace));
    if (!found) return sendPage(res, 404, notFoundPage(user, 'organization'));
    if (found.role !== 'owner')
      return sendPage(
        res,
        403,
        messagePage({
          title: 'Owners only',
          message: `Only an owner of ${found.org.name} adds members.`,
          error: true,
          user,
        }),
      );
    const input: MemberInput = { login: field(req, 'login'), role: field(req, 'role') || 'member' };
    try {
      if (!input.login) throw invalidField('Enter a username.', '/login', 'enter the username of the person to add');
      await addMember(ctx, found.org.namespace, input.login, input.role);
      res.redirect(303, `/settings/organizations/${found.org.namespace}?done=member-added`);
    } catch (err) {
      const problem = refusedWith(err, 400, 404, 409);
      // 404: no such user; 409: the last owner would become a member.
      const problems =
        problem.status === 400 ? formProblemsOf(problem) : [{ field: 'login', message: problem.message }];
      await showOrg(ctx, req, res, problem.status === 404 ? 400 : problem.status, user, problems, input);
    }
  });

  router.get('/settings/organizations/:namespace/members/:login/remove', async (req, res) => {
    const user = await pageUser(ctx, req);
    const removal = await removalOrNotFoundPage(ctx, res, user, String(req.params.namespace), String(req.params.login));
    if (!removal) return;
    const { found, member, self } = removal;
    const { org } = found;
    sendPage(
      res,
      200,
      confirmPage({
        user,
        current: '/settings/organizations',
        title: self ? `Leave ${org.name}?` : `Remove ${member.login} from ${org.name}?`,
        consequence: self
          ? `You lose the ${org.namespace} namespace, and your access tokens in it are deleted (with the proxy tokens minted from them). An owner can add you again; the tokens do not come back.`
          : `${member.login} loses the ${org.namespace} namespace, and their access tokens in it are deleted (with the proxy tokens minted from them). You can add them again; the tokens do not come back.`,
        action: `/settings/organizations/${org.namespace}/members/${member.login}/remove`,
        button: self ? 'Leave this organization' : 'Remove this member',
        cancel: `/settings/organizations/${org.namespace}`,
      }),
    );
  });

  router.post('/settings/organizations/:namespace/members/:login/remove', async (req, res) => {
    const user = await pageUser(ctx, req);
    const removal = await removalOrNotFoundPage(ctx, res, user, String(req.params.namespace), String(req.params.login));
    if (!removal) return;
    const { found, member, self } = removal;
    try {
      await removeMember(ctx, found.org.namespace, member.login);
      res.redirect(
        303,
        self
          ? '/settings/organizations?done=org-left'
          : `/settings/organizations/${found.org.namespace}?done=member-removed`,
      );
    } catch (err) {
      // The last owner cannot leave or be removed (409): said on the org page.
      await showOrg(ctx, req, res, 409, user, [{ message: refusedWith(err, 404, 409).message }]);
    }
  });
}
