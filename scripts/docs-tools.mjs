// Regenerates the tools section of docs/developer-tools.md from each tool's
// plugins/tools/<slug>/README.md (the fragments are the source of truth).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export function toolsSection() {
  const dir = join(root, 'plugins/tools');
  const slugs = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
  return slugs.map((s) => readFileSync(join(dir, s, 'README.md'), 'utf8').trim()).join('\n\n');
}

export function replaceBetween(text, tag, body) {
  const start = `<!-- ${tag}:start -->`;
  const end = `<!-- ${tag}:end -->`;
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a === -1 || b === -1) throw new Error(`no ${start} ... ${end} markers`);
  return `${text.slice(0, a + start.length)}\n${body}\n${text.slice(b)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = join(root, 'docs/developer-tools.md');
  writeFileSync(path, replaceBetween(readFileSync(path, 'utf8'), 'tools', toolsSection()));
  console.log('docs/developer-tools.md tools section regenerated');
}
