/**
 * Links and headings of Markdown pages, as GitHub renders them: fenced code
 * and inline code hold no links, and a heading's anchor is GitHub's slug
 * (lower case, punctuation dropped, spaces to hyphens, `-1`, `-2`… for repeats).
 */

/** The page's lines outside fenced code blocks, with their 1-based numbers. */
export function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fenced = false;
  text.split("\n").forEach((line, i) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) out.push({ line: i + 1, text: line });
  });
  return out;
}

export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}_\- ]/gu, "")
    .replace(/ /g, "-");
}

export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

export interface Link {
  line: number;
  target: string;
}

/** Inline links `[text](target)` in prose, inline code left out. */
export function links(text: string): Link[] {
  const out: Link[] = [];
  for (const { line, text: prose } of proseLines(text)) {
    const withoutCode = prose.replace(/`+[^`]*`+/g, "");
    for (const m of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ line, target: m[1]! });
  }
  return out;
}
