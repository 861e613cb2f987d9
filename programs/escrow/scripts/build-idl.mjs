#!/usr/bin/env node
// Builds the escrow IDL from the program source, the way `anchor idl build` (Anchor 0.32) does:
// `cargo test __anchor_private_print_idl --features idl-build` makes every #[program] item,
// #[event], #[error_code] and #[constant] print its IDL piece; this script assembles the pieces
// exactly like anchor-lang-idl's build.rs (merge types, shorten module paths, sort by name).
//
//   node programs/escrow/scripts/build-idl.mjs           writes programs/escrow/idl/escrow.json and escrow.ts
//   node programs/escrow/scripts/build-idl.mjs --check   exits 1 when a committed file is stale
//
// escrow.ts is the IDL as a TypeScript literal type, generated like `anchor build`'s
// target/types/escrow.ts (anchor-cli `idl_ts`: every all-word string value camelCased, public keys
// kept): the server types its client as `Program<Escrow>`, so a renamed account, argument or
// instruction of the program is a compile error.
//
// No Anchor CLI needed (there is no npm build of the 0.32 CLI). Rust stable + cargo only.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const programDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outFile = join(programDir, 'idl', 'escrow.json');
const typesFile = join(programDir, 'idl', 'escrow.ts');
const check = process.argv.includes('--check');

const env = {
  ...process.env,
  CARGO_TARGET_DIR: process.env.CARGO_TARGET_DIR || join(homedir(), '.cache', 'bazaar', 'cargo-target'),
  // Same switches the Anchor CLI sets (defaults of `anchor idl build`): PDA/relation
  // resolution on, docs kept, the `/// CHECK:` safety-comment lint enforced.
  ANCHOR_IDL_BUILD_RESOLUTION: 'TRUE',
  ANCHOR_IDL_BUILD_NO_DOCS: 'FALSE',
  ANCHOR_IDL_BUILD_SKIP_LINT: 'FALSE',
  ANCHOR_IDL_BUILD_PROGRAM_PATH: programDir,
};
const cargo = spawnSync(
  'cargo',
  ['test', '__anchor_private_print_idl', '--features', 'idl-build', '--lib', '--', '--show-output', '--quiet'],
  { cwd: programDir, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] },
);
if (cargo.status !== 0) {
  console.error(`idl: cargo exited with ${cargo.status}`);
  process.exit(cargo.status || 1);
}

// ---- parse the printed sections (anchor-lang-idl build.rs) ----
let address = '';
const constants = [];
const events = [];
const eventTypes = new Map();
let errors;
let idl;
let section = null;
let lines = [];
for (const line of cargo.stdout.split('\n')) {
  const begin = /^--- IDL begin (\w+) ---$/.exec(line);
  if (section === null) {
    if (begin) {
      section = begin[1];
      lines = [];
    }
    continue;
  }
  if (section === 'address') {
    address = line.replace(/[^a-zA-Z0-9]/g, '');
    section = null;
    continue;
  }
  if (line !== `--- IDL end ${section} ---`) {
    lines.push(line);
    continue;
  }
  const value = JSON.parse(lines.join('\n'));
  if (section === 'const') constants.push(value);
  else if (section === 'event') {
    events.push(value.event);
    for (const ty of value.types) eventTypes.set(ty.name, ty);
  } else if (section === 'errors') {
    if (errors) throw new Error('Multiple error definitions are not allowed.');
    errors = value;
  } else if (section === 'program') idl = value;
  section = null;
}
if (!idl) throw new Error('IDL does not exist: no program section printed');

idl.address = address;
idl.constants = constants;
idl.events = events;
idl.errors = errors ?? [];
const types = new Map(eventTypes);
for (const ty of idl.types ?? []) types.set(ty.name, ty);
idl.types = [...types.keys()].sort(byCodepoint).map((k) => types.get(k));

// ---- convert_module_paths: "a::b::Name" -> "Name" unless two paths share the name ----
let text = JSON.stringify(idl);
for (const m of [...text.matchAll(/"(\w+::)+(\w+)"/g)]) {
  const [path, , name] = m;
  const replaced = text.split(path).join(`"${name}"`);
  if (!new RegExp(`"(\\w+::)+${name}"`).test(replaced)) text = replaced;
}
idl = JSON.parse(text);

// ---- sort, then serialise with serde's field order and skip-if-empty rules ----
for (const key of ['accounts', 'constants', 'events', 'instructions', 'types']) {
  idl[key] = (idl[key] ?? []).slice().sort((a, b) => byCodepoint(a.name, b.name));
}
const ordered = { address: idl.address, metadata: idl.metadata };
for (const key of ['docs', 'instructions', 'accounts', 'events', 'errors', 'types', 'constants']) {
  const value = idl[key] ?? [];
  if (key === 'instructions' || value.length > 0) ordered[key] = value;
}
const output = `${JSON.stringify(ordered, null, 2)}\n`;

const typesOutput = idlTypes(output);

if (check) {
  const stale = [
    [outFile, output],
    [typesFile, typesOutput],
  ].filter(([file, text]) => (existsSync(file) ? readFileSync(file, 'utf8') : '') !== text);
  for (const [file] of stale) console.error(`idl: ${file} is stale; run \`npm run idl:build\` and commit it`);
  if (stale.length) process.exit(1);
  console.log('idl: programs/escrow/idl/escrow.json and escrow.ts are up to date');
} else {
  mkdirSync(dirname(outFile), { recursive: true });
  writeFileSync(outFile, output);
  writeFileSync(typesFile, typesOutput);
  console.log(`idl: wrote ${outFile} and escrow.ts (${idl.instructions.length} instructions, ${idl.events.length} events, ${idl.errors.length} errors)`);
}

/** anchor-cli's `idl_ts` (0.30+): the IDL with every all-word string value camelCased (public keys kept), as a type. */
function idlTypes(json) {
  const name = ordered.metadata.name;
  const typeName = name.replace(/(^|_)([a-z0-9])/g, (_, __, c) => c.toUpperCase());
  let text = JSON.stringify(JSON.parse(json));
  for (const m of [...text.matchAll(/"\w+":"(\w+)"/g)]) {
    const value = m[1];
    if (isPubkey(value)) continue;
    text = text.split(`"${value}"`).join(`"${lowerCamel(value)}"`);
  }
  const pretty = JSON.stringify(JSON.parse(text), null, 2);
  return `/**
 * Program IDL in camelCase format in order to be used in JS/TS.
 *
 * Note that this is only a type helper and is not the actual IDL. The original
 * IDL can be found at \`programs/escrow/idl/${name}.json\` (generated by
 * programs/escrow/scripts/build-idl.mjs; do not edit).
 */
export type ${typeName} = ${pretty};
`;
}

/** heck's to_lower_camel_case for identifiers: words split at `_` and lower-to-upper case changes. */
function lowerCamel(s) {
  const words = s.split('_').flatMap((w) => w.split(/(?<=[a-z0-9])(?=[A-Z])/)).filter(Boolean);
  return words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0].toUpperCase() + w.slice(1).toLowerCase())).join('');
}

/** Pubkey::from_str: base58 that decodes to 32 bytes. */
function isPubkey(s) {
  const alphabet = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  if (s.length < 32 || s.length > 44 || [...s].some((c) => !alphabet.includes(c))) return false;
  let n = 0n;
  for (const c of s) n = n * 58n + BigInt(alphabet.indexOf(c));
  let bytes = 0;
  while (n > 0n) {
    n >>= 8n;
    bytes++;
  }
  const zeros = s.match(/^1*/)[0].length;
  return bytes + zeros === 32;
}

function byCodepoint(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}
