// The admin CLI's user and organization commands.
import { addMember, createOrg } from '../../accounts/orgs.ts';
import { createUser, deleteUser, setPassword } from '../../accounts/users.ts';
import { type Command } from '../command.ts';

export const userCommands: Record<string, Command> = {
  'user create': {
    usage: 'user create --login LOGIN --password PASSWORD --name NAME [--avatar-url URL]',
    options: ['login', 'password', 'name', 'avatar-url'],
    needs: ['login', 'password', 'name'],
    run: async (ctx, v) => {
      const user = await createUser(ctx, {
        login: v.login!,
        password: v.password!,
        name: v.name!,
        ...(v['avatar-url'] ? { avatarUrl: v['avatar-url'] } : {}),
      });
      return { id: user.id, login: user.login, name: user.name, avatar_url: user.avatar_url };
    },
  },
  'user set-password': {
    usage: 'user set-password --login LOGIN --password PASSWORD',
    summary: 'sets a new password and ends every browser session of the user at once',
    options: ['login', 'password'],
    needs: ['login', 'password'],
    run: async (ctx, v) => {
      const { user, sessionsEnded } = await setPassword(ctx, v.login!, v.password!);
      return { id: user.id, login: user.login, sessions_ended: sessionsEnded };
    },
  },
  'user delete': {
    usage: 'user delete --login LOGIN',
    summary:
      'deletes the user and everything theirs (apps, grants, tokens, workflows, runs); their sessions end at once',
    options: ['login'],
    needs: ['login'],
    run: async (ctx, v) => {
      const user = await deleteUser(ctx, v.login!);
      return { deleted: true, id: user.id, login: user.login };
    },
  },
  'org create': {
    usage: 'org create --namespace NS --name NAME --owner LOGIN',
    options: ['namespace', 'name', 'owner'],
    needs: ['namespace', 'name', 'owner'],
    run: async (ctx, v) => {
      const org = await createOrg(ctx, { namespace: v.namespace!, name: v.name!, ownerLogin: v.owner! });
      return { id: org.id, namespace: org.namespace, name: org.name, owner: v.owner!.toLowerCase() };
    },
  },
  'org add-member': {
    usage: 'org add-member --namespace NS --login LOGIN [--role member|owner]',
    options: ['namespace', 'login', 'role'],
    needs: ['namespace', 'login'],
    run: async (ctx, v) => {
      const m = await addMember(ctx, v.namespace!, v.login!, v.role ?? 'member');
      return {
        org_id: m.org_id,
        user_id: m.user_id,
        namespace: v.namespace!.toLowerCase(),
        login: v.login!.toLowerCase(),
        role: m.role,
      };
    },
  },
};
