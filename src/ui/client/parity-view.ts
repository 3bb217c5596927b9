/**
 * A parity report (`standin parity --json`) on the page, opened like a tape:
 * the summary, a strip of the exchanges in the recording's time with each
 * differing one marked, the list of exchanges, and for the one chosen its
 * differences and both answers side by side (the upstream's, standin's).
 */
import { h } from "./dom.js";

interface Body {
  text?: string;
  base64?: string;
  sha256?: string;
  bytes: number;
}

interface Side {
  status: number;
  headers?: Record<string, string>;
  body?: Body;
}

interface Exchange {
  seq: number;
  service: string;
  method: string;
  path: string;
  route: string;
  sentMs: number;
  differences: number;
  skipped?: string;
  recorded?: Side;
  standin?: Side;
}

interface Difference {
  seq: number;
  kind: string;
  at: string;
  recorded?: unknown;
  standin?: unknown;
  note?: string;
  waived?: string;
}

export interface ParityReportDocument {
  format: "standin-parity-report";
  summary: { exchanges: number; routes: number; differences: number; differingRoutes: number; notEmulated: number; waived: number; skipped: number };
  recording: { startedAt: string; upstreams: Record<string, string> };
  differences: Difference[];
  exchanges: Exchange[];
}

export function isParityReport(document: unknown): document is ParityReportDocument {
  return typeof document === "object" && document !== null && (document as { format?: unknown }).format === "standin-parity-report";
}

export function parityView(report: ParityReportDocument): HTMLElement {
  const detail = h("div", { class: "parity-detail", id: "parity-detail", "aria-live": "polite" });
  const marks = new Map<number, HTMLElement[]>();
  const choose = (exchange: Exchange) => {
    for (const [seq, elements] of marks) for (const element of elements) element.classList.toggle("chosen", seq === exchange.seq);
    detail.replaceChildren(
      ...exchangeDetail(
        exchange,
        report.differences.filter((d) => d.seq === exchange.seq),
      ),
    );
  };
  const mark = (exchange: Exchange, element: HTMLElement) => {
    marks.set(exchange.seq, [...(marks.get(exchange.seq) ?? []), element]);
    return element;
  };
  const last = Math.max(1, ...report.exchanges.map((e) => e.sentMs));
  const strip = h(
    "div",
    { class: "parity-strip", "aria-label": "exchanges in the recording's time" },
    ...report.exchanges.map((exchange) => {
      const button = h("button", {
        type: "button",
        class: `parity-mark ${exchange.service}${exchange.differences > 0 ? " differs" : ""}`,
        title: `#${exchange.seq} ${exchange.method} ${exchange.path}`,
        "aria-label": `exchange ${exchange.seq}`,
        onclick: () => choose(exchange),
      });
      // Through the style object: the page's CSP refuses style attributes.
      button.style.left = `${((exchange.sentMs / last) * 98).toFixed(2)}%`;
      return mark(exchange, button);
    }),
  );
  const list = h(
    "ol",
    { class: "parity-exchanges" },
    ...report.exchanges.map((exchange) =>
      h(
        "li",
        {},
        mark(
          exchange,
          h(
            "button",
            { type: "button", class: `parity-row${exchange.differences > 0 ? " differs" : ""}`, "data-seq": exchange.seq, onclick: () => choose(exchange) },
            `#${exchange.seq} ${exchange.service} ${exchange.method} ${exchange.path}`,
            h("span", { class: "muted" }, ` ${exchange.route} · ${exchange.skipped ? "not compared" : plural(exchange.differences, "difference")}`),
          ),
        ),
      ),
    ),
  );
  const first = report.exchanges.find((e) => e.differences > 0);
  if (first) choose(first);
  else detail.replaceChildren(h("p", { class: "empty" }, "no exchange differs"));
  return h(
    "div",
    { class: "parity" },
    h("p", { class: "parity-summary", id: "parity-summary" }, summaryLine(report.summary)),
    strip,
    h("div", { class: "parity-body" }, list, detail),
  );
}

function exchangeDetail(exchange: Exchange, differences: Difference[]): HTMLElement[] {
  return [
    h("h3", {}, `#${exchange.seq} ${exchange.service} ${exchange.method} ${exchange.path}`),
    h(
      "ul",
      { class: "parity-differences" },
      ...differences.map((d) =>
        h(
          "li",
          { class: d.waived ? "waived" : "" },
          h("code", {}, d.at),
          ` ${d.kind}`,
          "recorded" in d || "standin" in d ? `: upstream ${shown(d.recorded)}, standin ${shown(d.standin)}` : "",
          d.note ? ` (${d.note})` : "",
          d.waived ? ` — waived: ${d.waived}` : "",
        ),
      ),
    ),
    h("div", { class: "parity-sides" }, side("upstream", "parity-upstream", exchange.recorded), side("standin", "parity-standin", exchange.standin)),
  ];
}

function side(title: string, id: string, answer: Side | undefined): HTMLElement {
  if (!answer) return h("div", { class: "parity-side", id }, h("h4", {}, title), h("p", { class: "empty" }, "no answer"));
  const headers = Object.entries(answer.headers ?? {})
    .map(([name, value]) => `${name}: ${value}`)
    .join("\n");
  return h(
    "div",
    { class: "parity-side", id },
    h("h4", {}, `${title} · ${answer.status}`),
    headers ? h("pre", { class: "parity-headers" }, headers) : null,
    h("pre", { class: "parity-answer" }, bodyText(answer.body)),
  );
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? "none";
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function bodyText(body: Body | undefined): string {
  if (!body) return "";
  if (body.text === undefined) return `(${body.bytes} bytes, ${body.sha256 ? "kept as a hash" : "not text"})`;
  try {
    return JSON.stringify(JSON.parse(body.text), null, 2);
  } catch {
    return body.text;
  }
}

function summaryLine(s: ParityReportDocument["summary"]): string {
  const parts = [
    plural(s.exchanges, "exchange"),
    plural(s.routes, "route"),
    `${plural(s.differences, "difference")} in ${plural(s.differingRoutes, "route")}`,
    `${s.notEmulated} not emulated`,
  ];
  if (s.waived > 0) parts.push(`${s.waived} waived`);
  if (s.skipped > 0) parts.push(`${s.skipped} not compared`);
  return `parity: ${parts.join(", ")}`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
