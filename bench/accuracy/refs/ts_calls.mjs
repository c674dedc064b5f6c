// The TypeScript compiler's resolution of every call into a corpus' own sources: for each
// call, `new` and tagged template in a program of the corpus' .ts/.tsx/.js files, the
// declaration the checker resolves it to (checker.getResolvedSignature, what the language
// service's call hierarchy follows). Prints "F\tfile" per source file, then per call
// "E\tcaller file\tcall line\tcallee file\tcallee first line\tcallee last line\tcallee name".
// Run: node ts_calls.mjs ROOT NODE_MODULES
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const [root, modules] = process.argv.slice(2);
const ts = createRequire(path.join(modules, "noop.js"))("typescript");
const files = [];
(function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name < b.name ? -1 : 1)) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full);
    else if (/\.(tsx?|mts|cts|jsx?|mjs|cjs)$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) files.push(full);
  }
})(root);
const program = ts.createProgram(files, {
  allowJs: true, checkJs: false, jsx: ts.JsxEmit.Preserve, target: ts.ScriptTarget.ESNext,
  module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
  noEmit: true, skipLibCheck: true, strict: true, allowImportingTsExtensions: true,
});
const checker = program.getTypeChecker();
const rel = (f) => path.relative(root, f);
const inside = new Set(files);
const out = [];
for (const f of files) out.push(`F\t${rel(f)}`);

function nameOf(decl) {
  if (ts.isConstructorDeclaration(decl)) return "constructor";
  if (decl.name && (ts.isIdentifier(decl.name) || ts.isStringLiteral(decl.name) || ts.isPrivateIdentifier(decl.name))) return decl.name.text;
  const parent = decl.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) && parent.name && ts.isIdentifier(parent.name)) return parent.name.text;
  return "";
}

function line(sf, pos) { return sf.getLineAndCharacterOfPosition(pos).line + 1; }

for (const sf of program.getSourceFiles()) {
  if (!inside.has(path.resolve(sf.fileName))) continue;
  const visit = (node) => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isTaggedTemplateExpression(node)) {
      let decl;
      try { decl = checker.getResolvedSignature(node)?.declaration; } catch { decl = undefined; }
      if (decl && !ts.isJSDocSignature(decl)) {
        const target = decl.getSourceFile();
        const name = nameOf(decl);
        if (name && inside.has(path.resolve(target.fileName))) {
          out.push(["E", rel(sf.fileName), line(sf, node.getStart(sf)), rel(target.fileName),
            line(target, decl.getStart(target)), line(target, decl.getEnd()), name].join("\t"));
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}
process.stdout.write(out.join("\n") + "\n");
