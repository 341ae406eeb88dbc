// Which problem codes each operation of openapi.yaml can answer, read from the service's source
// with the TypeScript compiler (no server, no database): see operationProblems.unit.test.ts for why, and for
// what it cannot see.
//
// A problem is made in one place: `new Problem('some_code', ...)` (src/shared/errors.ts and the
// domains' problem modules). The analysis builds a call graph over src/ (every function, method
// and arrow; an edge for every reference to another function, called or passed on, and from a
// function to those nested in it), and follows it from:
// - the operation's handler, as the domain routers hand it to mountOperations (an object literal
//   typed `Operations`, src/http/operations.ts);
// - the security handler of each scheme the operation names (src/http/security.ts);
// - the middleware createApp (src/app.ts) mounts on a path prefix of the operation (rate limits).
// A reference to an interface's method reaches every object literal or class that implements it
// (the AppContext's services, the authenticators). A function that hands its parameter to
// `new Problem` (`invalidBearer(code, ...)`) makes the code its callers pass.
import path from 'node:path';
import ts from 'typescript';

export interface ProblemSources {
  /** Codes reachable from each operation's handler, by operationId. */
  handlers: Map<string, Set<string>>;
  /** Codes reachable from each security scheme's handler, by scheme name. */
  schemes: Map<string, Set<string>>;
  /** Codes reachable from middleware mounted on a path prefix, by prefix. */
  prefixes: Map<string, Set<string>>;
}

type FunctionNode = ts.FunctionLikeDeclaration & { body: ts.Node };

const isFunctionWithBody = (node: ts.Node): node is FunctionNode =>
  (ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isConstructorDeclaration(node)) &&
  node.body !== undefined;

export function problemSources(root: string): ProblemSources {
  const src = path.join(root, 'src');
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(root, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  const program = ts.createProgram([path.join(src, 'app.ts')], { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const files = program
    .getSourceFiles()
    .filter((f) => f.fileName.startsWith(src + path.sep) && !f.fileName.endsWith('.test.ts'));
  const errorsFile = path.join(src, 'shared', 'errors.ts');
  const problemClass = program
    .getSourceFile(errorsFile)
    ?.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === 'Problem');
  if (!problemClass) throw new Error('class Problem not found in src/shared/errors.ts');

  // `ctx.db` (AppContext.db): a function that uses the store can meet its outage, which the error
  // handler answers as database_unavailable (the pseudo-producer of that code).
  const dbProperty = program
    .getSourceFile(path.join(src, 'context.ts'))
    ?.statements.find((s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'AppContext')
    ?.members.find((m) => m.name?.getText() === 'db');
  if (!dbProperty) throw new Error('AppContext.db not found in src/context.ts');
  const aliased = (symbol: ts.Symbol | undefined) =>
    symbol && symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;

  // --- implementations of interface members: object literals and classes typed by an interface ---
  const implementations = new Map<ts.Declaration, ts.Node[]>();
  const implement = (member: ts.Symbol | undefined, node: ts.Node) => {
    for (const declaration of member?.declarations ?? []) {
      if (!ts.isPropertySignature(declaration) && !ts.isMethodSignature(declaration)) continue;
      implementations.set(declaration, [...(implementations.get(declaration) ?? []), node]);
    }
  };
  const collectImplementations = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node)) {
      const type = checker.getContextualType(node);
      for (const property of node.properties) {
        if (!property.name || ts.isComputedPropertyName(property.name)) continue;
        const name = property.name.getText();
        for (const t of type ? (type.isUnion() ? type.types : [type]) : []) implement(t.getProperty(name), property);
      }
    }
    if (ts.isClassDeclaration(node)) {
      for (const clause of node.heritageClauses ?? []) {
        for (const heritage of clause.types) {
          const type = checker.getTypeAtLocation(heritage);
          for (const member of node.members)
            if (member.name && !ts.isComputedPropertyName(member.name))
              implement(type.getProperty(member.name.getText()), member);
        }
      }
    }
    ts.forEachChild(node, collectImplementations);
  };
  for (const file of files) collectImplementations(file);

  /** The function bodies a declaration stands for (a const's arrow, an implementation of an interface member, ...). */
  const functionsOf = (declaration: ts.Node, seen = new Set<ts.Node>()): FunctionNode[] => {
    if (seen.has(declaration)) return [];
    seen.add(declaration);
    if (isFunctionWithBody(declaration))
      return declaration.getSourceFile().fileName.startsWith(src) ? [declaration] : [];
    if (
      (ts.isVariableDeclaration(declaration) ||
        ts.isPropertyAssignment(declaration) ||
        ts.isPropertyDeclaration(declaration)) &&
      declaration.initializer
    ) {
      return functionsOfExpression(declaration.initializer, seen);
    }
    if (ts.isShorthandPropertyAssignment(declaration)) {
      return (checker.getShorthandAssignmentValueSymbol(declaration)?.declarations ?? []).flatMap((d) =>
        functionsOf(d, seen),
      );
    }
    if (ts.isPropertySignature(declaration) || ts.isMethodSignature(declaration)) {
      return (implementations.get(declaration) ?? []).flatMap((d) => functionsOf(d, seen));
    }
    return [];
  };
  const functionsOfExpression = (expression: ts.Expression, seen: Set<ts.Node>): FunctionNode[] => {
    if (isFunctionWithBody(expression)) return [expression];
    if (
      ts.isParenthesizedExpression(expression) ||
      ts.isAsExpression(expression) ||
      ts.isSatisfiesExpression(expression)
    )
      return functionsOfExpression(expression.expression, seen);
    if (ts.isArrayLiteralExpression(expression))
      return expression.elements.flatMap((e) => functionsOfExpression(e, seen));
    if (ts.isCallExpression(expression))
      return [
        ...referenced(expression.expression, seen),
        ...expression.arguments.flatMap((a) => functionsOfExpression(a, seen)),
      ];
    if (ts.isIdentifier(expression) || ts.isPropertyAccessExpression(expression)) return referenced(expression, seen);
    return [];
  };
  const referenced = (node: ts.Node, seen = new Set<ts.Node>()): FunctionNode[] => {
    const at = ts.isPropertyAccessExpression(node) ? node.name : node;
    const symbol = aliased(checker.getSymbolAtLocation(at));
    return (symbol?.declarations ?? []).flatMap((d) => functionsOf(d, seen));
  };

  // --- each function: the codes it makes, the functions it reaches -----------------------------
  const literalCodes = (expression: ts.Expression): string[] | null => {
    const type = checker.getTypeAtLocation(expression);
    const types = type.isUnion() ? type.types : [type];
    return types.every((t) => t.isStringLiteral()) ? types.map((t) => (t as ts.StringLiteralType).value) : null;
  };
  interface Facts {
    codes: Set<string>;
    calls: Set<FunctionNode>;
    /** The parameter it hands to `new Problem` as the code, if any. */
    codeParameter?: number;
  }
  const facts = new Map<FunctionNode, Facts>();
  const factsOf = (fn: FunctionNode): Facts => {
    let known = facts.get(fn);
    if (known) return known;
    known = { codes: new Set(), calls: new Set() };
    facts.set(fn, known);
    const own = known;
    const visit = (node: ts.Node): void => {
      if (node !== fn && isFunctionWithBody(node)) {
        own.calls.add(node); // a nested function: reached with its parent
        return;
      }
      if (
        ts.isNewExpression(node) &&
        aliased(checker.getSymbolAtLocation(node.expression))?.valueDeclaration === problemClass
      ) {
        const [code] = node.arguments ?? [];
        const parameter =
          code && ts.isIdentifier(code)
            ? fn.parameters.findIndex((p) => ts.isIdentifier(p.name) && p.name.text === code.text)
            : -1;
        if (parameter >= 0) own.codeParameter = parameter;
        else {
          const codes = code && literalCodes(code);
          if (!codes)
            throw new Error(
              `${fn.getSourceFile().fileName}:${node.getStart()}: new Problem with a code the analysis cannot read`,
            );
          for (const c of codes) own.codes.add(c);
        }
      }
      if (
        ts.isPropertyAccessExpression(node) &&
        node.name.text === 'db' &&
        checker.getSymbolAtLocation(node.name)?.declarations?.includes(dbProperty)
      ) {
        own.codes.add('database_unavailable');
      }
      if (ts.isIdentifier(node) || (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name))) {
        for (const callee of referenced(node)) if (callee !== fn) own.calls.add(callee);
      }
      if (ts.isCallExpression(node)) {
        for (const callee of referenced(node.expression)) {
          if (callee === fn) continue;
          const index = factsOf(callee).codeParameter;
          const argument = index === undefined ? undefined : node.arguments[index];
          const codes = argument && literalCodes(argument);
          if (codes) for (const c of codes) own.codes.add(c);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(fn.body);
    for (const parameter of fn.parameters) if (parameter.initializer) visit(parameter.initializer);
    return own;
  };
  const reachableCodes = (starts: FunctionNode[]): Set<string> => {
    const codes = new Set<string>();
    const seen = new Set<FunctionNode>();
    const queue = [...starts];
    while (queue.length) {
      const fn = queue.pop()!;
      if (seen.has(fn)) continue;
      seen.add(fn);
      const f = factsOf(fn);
      for (const c of f.codes) codes.add(c);
      queue.push(...f.calls);
    }
    return codes;
  };

  // --- the starting points ----------------------------------------------------------------------
  const operationsType = program
    .getSourceFile(path.join(src, 'http', 'operations.ts'))
    ?.statements.find(
      (s): s is ts.TypeAliasDeclaration => ts.isTypeAliasDeclaration(s) && s.name.text === 'Operations',
    );
  if (!operationsType) throw new Error('type Operations not found in src/http/operations.ts');
  const operationsTypeOf = checker.getTypeAtLocation(operationsType);
  const handlers = new Map<string, Set<string>>();
  const schemes = new Map<string, Set<string>>();
  const prefixes = new Map<string, Set<string>>();
  const securityFile = path.join(src, 'http', 'security.ts');
  const appFile = path.join(src, 'app.ts');
  const findStarts = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node)) {
      const type = checker.getContextualType(node);
      const file = node.getSourceFile().fileName;
      if (type === operationsTypeOf) {
        for (const property of node.properties) {
          if (ts.isSpreadAssignment(property) || !property.name) continue;
          const starts =
            ts.isShorthandPropertyAssignment(property) ||
            ts.isPropertyAssignment(property) ||
            ts.isMethodDeclaration(property)
              ? functionsOf(property)
              : [];
          if (!starts.length)
            throw new Error(
              `${file}: the handler of ${property.name.getText()} is not a function the analysis can follow`,
            );
          handlers.set(property.name.getText(), reachableCodes(starts));
        }
      } else if (file === securityFile && node.parent && ts.isVariableDeclaration(node.parent)) {
        for (const property of node.properties)
          if (property.name) schemes.set(property.name.getText(), reachableCodes(functionsOf(property)));
      }
    }
    // app.use('/prefix' | ['/a', '/b'], middleware...) in src/app.ts
    if (
      ts.isCallExpression(node) &&
      node.getSourceFile().fileName === appFile &&
      ts.isPropertyAccessExpression(node.expression) &&
      node.expression.name.text === 'use'
    ) {
      const [first, ...middleware] = node.arguments;
      const paths =
        first && ts.isStringLiteral(first)
          ? [first.text]
          : first && ts.isArrayLiteralExpression(first) && first.elements.every(ts.isStringLiteral)
            ? first.elements.map((e) => (e as ts.StringLiteral).text)
            : null;
      if (paths) {
        const codes = reachableCodes(middleware.flatMap((m) => functionsOfExpression(m, new Set())));
        for (const p of paths) prefixes.set(p, new Set([...(prefixes.get(p) ?? []), ...codes]));
      }
    }
    ts.forEachChild(node, findStarts);
  };
  for (const file of files) findStarts(file);
  return { handlers, schemes, prefixes };
}
