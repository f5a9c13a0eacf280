#!/usr/bin/env node
// The structure in numbers, measured from the imports of src/ and projections/
// with the floors docs/architecture.md defines: files loose in src/, import
// arrows that run back up a floor, import cycles between files, and the files
// and folders the path of a submission crosses.
//
//   node scripts/structure.js          the numbers and the lists behind them
//   node scripts/structure.js --json   the same as JSON
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The floors from the top down; a file imports only from its own floor or one below. */
export const FLOORS = [
  { name: 'entry points', holds: (file) => file === 'src/main.ts' || file.startsWith('src/cli/') },
  { name: 'composition', holds: (file) => ['src/app.ts', 'src/services.ts', 'src/domain-events.ts'].includes(file) },
  { name: 'features', holds: (file) => /^src\/[^/]+\//.test(file) && !/^src\/(http|kernel|infra)\//.test(file) },
  { name: 'read side', holds: (file) => file.startsWith('projections/') },
  { name: 'http plugins', holds: (file) => file.startsWith('src/http/') },
  { name: 'kernel', holds: (file) => file.startsWith('src/kernel/') && !file.startsWith('src/kernel/feed/') },
  { name: 'feed machinery', holds: (file) => file.startsWith('src/kernel/feed/') },
  { name: 'infrastructure', holds: (file) => file.startsWith('src/infra/') },
  { name: 'configuration', holds: (file) => file === 'src/config.ts' },
];

/** The floor of a file: its index in FLOORS, 0 at the top. */
export const floorOf = (file) => {
  const floor = FLOORS.findIndex((f) => f.holds(file));
  if (floor < 0) throw new Error(`${file} is on no floor`);
  return floor;
};

/**
 * A file's room: the folder an arrow is counted between. A feature's folder,
 * `projections/`, `http/`, `kernel/`, `kernel/feed/`, `infra/`, `cli/`; a file
 * loose in `src/` is a room of its own.
 */
export const roomOf = (file) => {
  if (file.startsWith('src/kernel/feed/')) return 'src/kernel/feed/';
  const folder = /^(src\/[^/]+\/|projections\/)/.exec(file);
  return folder ? folder[1] : file;
};

/** The folder a file is counted in on the submission path: its top folder under src/, or projections/. */
const folderOf = (file) => /^(src\/[^/]+\/|projections\/)/.exec(file)?.[1] ?? file;

const sources = (root, dir) => {
  const full = join(root, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
};

/** The static imports and re-exports of one file (type-only ones too), resolved within the repository. */
const importsOf = (root, file) => {
  const text = readFileSync(join(root, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  const targets = [];
  for (const statement of source.statements) {
    const specifier = (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) ? statement.moduleSpecifier : undefined;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) continue;
    const target = join(dirname(file), specifier.text).split('\\').join('/').replace(/\.js$/, '.ts');
    if (existsSync(join(root, target))) targets.push(target);
  }
  return [...new Set(targets)];
};

/** Cycles between files: the strongly connected components of more than one file (Tarjan). */
const cyclesOf = (graph) => {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const cycles = [];
  const visit = (file) => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
};

/** Where the submission path starts: the route of `POST /api/forms/:id/submit` and the widget's. */
export const SUBMISSION_ROUTE = { file: 'src/submissions/routes.ts', name: 'submitRoute' };

/** The plumbing every request crosses, left out of the path: the HTTP plugins, the infrastructure, the kernel. */
const plumbing = (file) => /^src\/(http|infra|kernel)\//.test(file);

/** The read model the reply waits for: the projection runner applies the appended events to it before the route answers. */
const AWAITED = 'projections/responses.ts';

/** One file's top-level declarations by name, and its value imports and re-exports by local name. */
const bindingsOf = (root, file) => {
  const source = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const resolveFrom = (specifier) => join(dirname(file), specifier).split('\\').join('/').replace(/\.js$/, '.ts');
  const declarations = new Map();
  const imports = new Map();
  const reexports = new Map();
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      if (!clause || clause.isTypeOnly || !statement.moduleSpecifier.text.startsWith('.')) continue;
      const from = resolveFrom(statement.moduleSpecifier.text);
      if (clause.name) imports.set(clause.name.text, { from, name: 'default' });
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) imports.set(bindings.name.text, { from, name: '*' });
      else for (const element of bindings?.elements ?? []) if (!element.isTypeOnly) imports.set(element.name.text, { from, name: (element.propertyName ?? element.name).text });
    } else if (ts.isExportDeclaration(statement)) {
      if (statement.isTypeOnly || !statement.moduleSpecifier || !statement.exportClause || !ts.isNamedExports(statement.exportClause)) continue;
      const from = resolveFrom(statement.moduleSpecifier.text);
      for (const element of statement.exportClause.elements) if (!element.isTypeOnly) reexports.set(element.name.text, { from, name: (element.propertyName ?? element.name).text });
    } else if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) if (ts.isIdentifier(declaration.name)) declarations.set(declaration.name.text, declaration);
    } else if ((ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isEnumDeclaration(statement)) && statement.name) {
      declarations.set(statement.name.text, statement);
    }
  }
  return { declarations, imports, reexports };
};

/** The names a declaration's code refers to, leaving out types (they do not run) and property names. */
const namesUsedIn = (node) => {
  const names = new Set();
  const visit = (child) => {
    if (ts.isTypeNode(child) || ts.isTypeAliasDeclaration(child) || ts.isInterfaceDeclaration(child)) return;
    if (ts.isPropertyAccessExpression(child)) return visit(child.expression);
    if (ts.isIdentifier(child)) {
      const parent = child.parent;
      const named = parent && (ts.isPropertyAssignment(parent) || ts.isMethodDeclaration(parent) || ts.isPropertyDeclaration(parent)) && parent.name === child;
      if (!named) names.add(child.text);
    }
    ts.forEachChild(child, visit);
  };
  visit(node);
  return names;
};

/**
 * The path of a submission: from the submit route's handler, every
 * declaration its code reaches through the names it uses (a value imported
 * from another file brings that file's declaration in, and what it uses in
 * turn; types do not run and are not followed), leaving out the plumbing
 * every request crosses (src/http/, src/infra/, src/kernel/); plus the read
 * model the reply waits for. A file is on the path when one of its
 * declarations is, or a name it passes on from another; a folder, when one
 * of its files is.
 */
export const submissionPath = (root, { file, name } = SUBMISSION_ROUTE) => {
  const parsed = new Map();
  const bindings = (path) => {
    if (!parsed.has(path)) parsed.set(path, bindingsOf(root, path));
    return parsed.get(path);
  };
  const reached = new Set();
  const files = new Set([AWAITED]);
  const queue = [[file, name]];
  while (queue.length > 0) {
    const [path, wanted] = queue.pop();
    const key = `${path}#${wanted}`;
    if (reached.has(key) || plumbing(path) || !existsSync(join(root, path))) continue;
    reached.add(key);
    const { declarations, imports, reexports } = bindings(path);
    const names = wanted === '*' || wanted === 'default' ? [...declarations.keys(), ...reexports.keys()] : [wanted];
    for (const each of names) {
      const reexport = reexports.get(each);
      if (reexport) {
        files.add(path);
        queue.push([reexport.from, reexport.name]);
        continue;
      }
      const declaration = declarations.get(each);
      if (!declaration) continue;
      files.add(path);
      for (const used of namesUsedIn(declaration)) {
        if (used !== each && declarations.has(used)) queue.push([path, used]);
        const imported = imports.get(used);
        if (imported) queue.push([imported.from, imported.name]);
      }
    }
  }
  const sorted = [...files].sort();
  return { files: sorted, folders: [...new Set(sorted.map(folderOf))].sort() };
};

/** Every number of the structure, with the lists behind them. */
export const measure = (root = ROOT) => {
  const files = [...sources(root, 'src'), ...sources(root, 'projections')];
  const graph = new Map(files.map((file) => [file, importsOf(root, file)]));
  const loose = files.filter((file) => /^src\/[^/]+\.ts$/.test(file));
  const upward = new Map();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      if (floorOf(target) >= floorOf(file)) continue;
      const arrow = `${roomOf(file)} -> ${roomOf(target)}`;
      upward.set(arrow, [...(upward.get(arrow) ?? []), `${file} -> ${target}`]);
    }
  }
  const arrows = [...upward.keys()].sort().map((arrow) => ({ arrow, imports: upward.get(arrow) }));
  return { loose, arrows, cycles: cyclesOf(graph), submissionPath: submissionPath(root) };
};

/** The numbers as the script prints them. */
export const report = (numbers) => [
  `Files loose in src/: ${numbers.loose.length} (${numbers.loose.join(', ')})`,
  `Import arrows that run back up a floor: ${numbers.arrows.length}`,
  ...numbers.arrows.flatMap(({ arrow, imports }) => [`  ${arrow}`, ...imports.map((line) => `      ${line}`)]),
  `Import cycles between files: ${numbers.cycles.length}`,
  ...numbers.cycles.map((cycle) => `  ${cycle.join(', ')}`),
  `The path of a submission: ${numbers.submissionPath.files.length} files in ${numbers.submissionPath.folders.length} folders (${numbers.submissionPath.folders.join(', ')})`,
  ...numbers.submissionPath.files.map((file) => `  ${file}`),
].join('\n');

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const numbers = measure();
  console.log(process.argv.includes('--json') ? JSON.stringify(numbers, null, 2) : report(numbers));
}
