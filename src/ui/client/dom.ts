/** A tiny element builder: the dashboard is plain DOM, no framework. */
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

export function h(tag: string, attrs: Attrs = {}, ...children: Child[]): HTMLElement {
  return fill(document.createElement(tag), attrs, children);
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function s(tag: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

function fill<E extends Element>(element: E, attrs: Attrs, children: Child[]): E {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(typeof child === "number" ? String(child) : child);
  return element;
}

/** A table with a header row; empty tables say so instead. */
export function table(headers: string[], rows: Child[][], empty = "none"): HTMLElement {
  if (rows.length === 0) return h("p", { class: "empty" }, empty);
  return h(
    "table",
    {},
    h("thead", {}, h("tr", {}, ...headers.map((name) => h("th", { scope: "col" }, name)))),
    h("tbody", {}, ...rows.map((cells) => h("tr", {}, ...cells.map((cell) => h("td", {}, cell))))),
  );
}

export function badge(text: string, tone = text): HTMLElement {
  return h("span", { class: `badge ${tone.toLowerCase().replace(/[^a-z]+/g, "-")}` }, text);
}
