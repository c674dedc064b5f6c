// The TypeScript compiler's view of a corpus, for bench/bench_accuracy.py: React components
// with their props, and every import with the file TypeScript resolves it to.
//
//   node bench/ts_components.mjs <corpus root> <node_modules holding typescript>
//
// Prints one JSON document: {"components": [...], "imports": [...], "files": n}.
//
// Components: named functions (declarations, or function/arrow expressions bound to a
// variable, also through memo()/forwardRef() or any call taking the function) whose name
// starts with a capital letter and that return JSX, and classes whose base-class chain
// reaches React's Component/PureComponent or that have a render() returning JSX.
// Props: the checker's properties of the first parameter's type (for a class, of its `props`
// member), members of a union all counted; each marked `own` when one of its declarations is
// in the corpus (not in node_modules). An `any` props type (untyped JavaScript) is reported as
// unknown.
// Imports: import/export-from declarations, `import x = require()`, require() and import()
// calls, each with ts.resolveModuleName's answer under the corpus' tsconfig.json.

import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const [root, modules] = process.argv.slice(2).map((p) => path.resolve(p));
const require = createRequire(path.join(modules, "noop.js"));
const ts = require("typescript");

function compilerSetup() {
  const configPath = path.join(root, "tsconfig.json");
  if (fs.existsSync(configPath)) {
    const config = ts.readConfigFile(configPath, ts.sys.readFile);
    const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
    const options = { ...parsed.options, allowJs: true, noEmit: true };
    return { options, files: parsed.fileNames };
  }
  const options = {
    allowJs: true,
    checkJs: false,
    jsx: ts.JsxEmit.Preserve,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    target: ts.ScriptTarget.ESNext,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
  };
  return { options, files: walk(root) };
}

function walk(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if ([".git", ".planning", "node_modules"].includes(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(full));
    else if (/\.(tsx?|jsx?|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts"))
      out.push(full);
  }
  return out;
}

const { options, files } = compilerSetup();
const program = ts.createProgram(files, options);
const checker = program.getTypeChecker();
const rel = (file) => path.relative(root, file).split(path.sep).join("/");
const inCorpus = (file) =>
  !path.relative(root, file).startsWith("..") && !file.includes("node_modules");

function unwrap(expr) {
  while (
    expr &&
    (ts.isParenthesizedExpression(expr) ||
      ts.isAsExpression(expr) ||
      ts.isNonNullExpression(expr) ||
      ts.isSatisfiesExpression(expr))
  )
    expr = expr.expression;
  return expr;
}

function isJsx(expr) {
  expr = unwrap(expr);
  if (!expr) return false;
  if (ts.isJsxElement(expr) || ts.isJsxSelfClosingElement(expr) || ts.isJsxFragment(expr))
    return true;
  if (ts.isConditionalExpression(expr)) return isJsx(expr.whenTrue) || isJsx(expr.whenFalse);
  if (ts.isArrayLiteralExpression(expr)) return expr.elements.some(isJsx);
  if (ts.isBinaryExpression(expr)) {
    const op = expr.operatorToken.kind;
    if (
      op === ts.SyntaxKind.AmpersandAmpersandToken ||
      op === ts.SyntaxKind.BarBarToken ||
      op === ts.SyntaxKind.QuestionQuestionToken
    )
      return isJsx(expr.left) || isJsx(expr.right);
  }
  return false;
}

function returnsJsx(fn) {
  if (!fn.body) return false;
  if (!ts.isBlock(fn.body)) return isJsx(fn.body);
  let found = false;
  const visit = (node) => {
    if (found || ts.isFunctionLike(node) || ts.isClassLike(node)) return;
    if (ts.isReturnStatement(node) && node.expression && isJsx(node.expression)) found = true;
    else ts.forEachChild(node, visit);
  };
  ts.forEachChild(fn.body, visit);
  return found;
}

// The function a variable's initializer defines: itself, or the function passed to a wrapper
// call (memo(), forwardRef(), React.memo(forwardRef(...)), ...).
function functionOf(init) {
  init = unwrap(init);
  if (!init) return undefined;
  if (ts.isArrowFunction(init) || ts.isFunctionExpression(init)) return init;
  if (ts.isCallExpression(init)) {
    for (const arg of init.arguments) {
      const fn = functionOf(arg);
      if (fn) return fn;
    }
  }
  return undefined;
}

function reachesReactComponent(type, seen = new Set()) {
  for (const base of checker.getBaseTypes(type) ?? []) {
    const symbol = base.getSymbol();
    if (!symbol || seen.has(symbol)) continue;
    seen.add(symbol);
    const decl = symbol.declarations?.[0];
    const file = decl?.getSourceFile().fileName ?? "";
    if (
      ["Component", "PureComponent"].includes(symbol.getName()) &&
      /[\\/](@types[\\/]react|react)[\\/]/.test(file)
    )
      return true;
    if (base.isClassOrInterface() && reachesReactComponent(base, seen)) return true;
  }
  return false;
}

function propsOf(type) {
  if (!type || type.flags & ts.TypeFlags.Any) return null;
  const members = type.isUnion() ? type.types : [type];
  const props = new Map();
  for (const member of members) {
    for (const prop of checker.getPropertiesOfType(checker.getApparentType(member))) {
      const own = (prop.declarations ?? []).some((d) => inCorpus(d.getSourceFile().fileName));
      const name = prop.getName();
      props.set(name, (props.get(name) ?? false) || own);
    }
  }
  return [...props]
    .map(([name, own]) => ({ name, own }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

function functionProps(fn) {
  const param = fn.parameters[0];
  if (!param) return [];
  return propsOf(checker.getTypeAtLocation(param));
}

function classProps(node) {
  const symbol = node.name && checker.getSymbolAtLocation(node.name);
  if (!symbol) return null;
  const instance = checker.getDeclaredTypeOfSymbol(symbol);
  const props = checker.getPropertyOfType(instance, "props");
  if (!props) return [];
  return propsOf(checker.getTypeOfSymbolAtLocation(props, node));
}

function components(source) {
  const found = [];
  const line = (node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const add = (name, node, kind, props) =>
    found.push({ file: rel(source.fileName), name, line: line(node), kind, props });
  const visit = (node) => {
    if (ts.isFunctionDeclaration(node) && node.name && /^[A-Z]/.test(node.name.text)) {
      if (returnsJsx(node)) add(node.name.text, node, "function", functionProps(node));
    } else if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      /^[A-Z]/.test(node.name.text)
    ) {
      const fn = functionOf(node.initializer);
      if (fn && returnsJsx(fn)) add(node.name.text, node, "function", functionProps(fn));
    } else if (ts.isClassLike(node) && node.name) {
      const symbol = checker.getSymbolAtLocation(node.name);
      const type = symbol && checker.getDeclaredTypeOfSymbol(symbol);
      const render = node.members.find(
        (m) => ts.isMethodDeclaration(m) && m.name?.getText(source) === "render",
      );
      if ((type && reachesReactComponent(type)) || (render && returnsJsx(render)))
        add(node.name.text, node, "class", classProps(node));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function imports(source) {
  const found = [];
  const add = (node, spec) => {
    const resolved = ts.resolveModuleName(spec, source.fileName, options, ts.sys).resolvedModule;
    const target = resolved?.resolvedFileName;
    found.push({
      file: rel(source.fileName),
      module: spec,
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      resolved: target && inCorpus(target) ? rel(target) : null,
      external: Boolean(resolved?.isExternalLibraryImport || (target && !inCorpus(target))),
    });
  };
  const visit = (node) => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    )
      add(node, node.moduleSpecifier.text);
    else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    )
      add(node, node.moduleReference.expression.text);
    else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === "require")) &&
      node.arguments.length === 1 &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      add(node, node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const result = { components: [], imports: [], files: 0 };
for (const source of program.getSourceFiles()) {
  if (source.isDeclarationFile || !inCorpus(source.fileName)) continue;
  result.files += 1;
  result.imports.push(...imports(source));
  if (/\.(tsx|jsx|js)$/.test(source.fileName)) result.components.push(...components(source));
}
process.stdout.write(JSON.stringify(result));
