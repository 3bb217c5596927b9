/**
 * The parity report: the compared exchanges grouped by route, the waivers
 * applied, a one-line summary, the text `standin parity` prints and the JSON
 * document `--json` writes (which the dashboard opens like a tape).
 */
import type { Recording } from "../recording.js";
import type { Answer, DifferenceKind } from "./exchange-diff.js";
import type { ComparedExchange } from "./replay-recording.js";
import type { Waiver, WaiverMatcher } from "./waivers.js";

import { PARITY_REPORT_FORMAT, PARITY_REPORT_VERSION } from "./report-format.js";

export { PARITY_REPORT_FORMAT, PARITY_REPORT_VERSION };

export interface ReportedDifference {
  readonly seq: number;
  readonly service: string;
  readonly method: string;
  readonly path: string;
  readonly route: string;
  readonly kind: DifferenceKind;
  readonly at: string;
  readonly recorded?: unknown;
  readonly standin?: unknown;
  readonly note?: string;
  /** The waiver's reason, when one covers it. */
  readonly waived?: string;
}

export interface ReportedRoute {
  readonly service: string;
  readonly route: string;
  readonly kind: "emulated" | "unemulated" | "unknown";
  readonly exchanges: number;
  readonly differences: number;
  readonly waived: number;
}

export interface ReportedExchange {
  readonly seq: number;
  readonly service: string;
  readonly method: string;
  readonly path: string;
  readonly route: string;
  readonly sentMs: number;
  /** Differences not waived. */
  readonly differences: number;
  readonly skipped?: string;
  /** Both answers, kept for the exchanges that differ (the dashboard shows them side by side); the statuses alone for the rest. */
  readonly recorded?: Answer | { readonly status: number };
  readonly standin?: Answer | { readonly status: number };
}

export interface ParitySummary {
  readonly exchanges: number;
  readonly routes: number;
  /** Differences not waived, routes standin does not emulate aside. */
  readonly differences: number;
  readonly differingRoutes: number;
  /** Routes standin does not emulate (501) or does not know (404) that the suite used, not waived. */
  readonly notEmulated: number;
  readonly waived: number;
  readonly skipped: number;
}

/** How the comparison was made (the options that change what counts as a difference). */
export interface ParitySettings {
  /** Two instants this close, offset from each run's start, are the same: a Go duration (`1s`) … */
  readonly timeTolerance: string;
  /** … and in milliseconds. */
  readonly timeToleranceMs: number;
}

export interface ParityReport {
  readonly format: typeof PARITY_REPORT_FORMAT;
  readonly version: typeof PARITY_REPORT_VERSION;
  readonly recording: {
    readonly startedAt: string;
    readonly upstreams: Recording["upstreams"];
    readonly products?: Recording["products"];
    readonly recordedBy: string;
    readonly truncated: boolean;
  };
  readonly settings: ParitySettings;
  readonly summary: ParitySummary;
  /** True when nothing differs beyond the waivers (`standin parity` exits 0). */
  readonly ok: boolean;
  readonly routes: readonly ReportedRoute[];
  readonly differences: readonly ReportedDifference[];
  readonly exchanges: readonly ReportedExchange[];
  readonly waivers: readonly Waiver[];
}

const ROUTE_KINDS: ReadonlySet<DifferenceKind> = new Set(["not-emulated", "unknown-path"]);

export function buildReport(
  recording: Recording,
  compared: readonly ComparedExchange[],
  waivers: WaiverMatcher,
  waiverList: readonly Waiver[],
  settings: ParitySettings,
): ParityReport {
  const differences: ReportedDifference[] = [];
  const routes = new Map<string, { service: string; route: string; kind: ReportedRoute["kind"]; exchanges: number; differences: number; waived: number }>();
  const exchanges: ReportedExchange[] = [];
  for (const exchange of compared) {
    const key = `${exchange.service} ${exchange.route.label}`;
    const route = routes.get(key) ?? { service: exchange.service, route: exchange.route.label, kind: exchange.route.kind, exchanges: 0, differences: 0, waived: 0 };
    routes.set(key, route);
    route.exchanges++;
    let open = 0;
    for (const difference of exchange.differences) {
      const waiver = waivers.find(exchange.service, exchange.route.label, difference.at);
      const { seq, service, method, path } = exchange;
      differences.push({ seq, service, method, path, route: exchange.route.label, ...difference, ...(waiver && { waived: waiver.reason }) });
      if (waiver) route.waived++;
      else {
        route.differences++;
        open++;
      }
    }
    const answers = open > 0 ? { recorded: exchange.recorded, standin: exchange.standin } : { recorded: statusOnly(exchange.recorded), standin: statusOnly(exchange.standin) };
    exchanges.push({
      seq: exchange.seq,
      service: exchange.service,
      method: exchange.method,
      path: exchange.path,
      route: exchange.route.label,
      sentMs: exchange.sentMs,
      differences: open,
      ...(exchange.skipped !== undefined && { skipped: exchange.skipped }),
      ...(answers.recorded && { recorded: answers.recorded }),
      ...(answers.standin && { standin: answers.standin }),
    });
  }
  const open = differences.filter((d) => d.waived === undefined);
  const answerDifferences = open.filter((d) => !ROUTE_KINDS.has(d.kind));
  const summary: ParitySummary = {
    exchanges: compared.length,
    routes: routes.size,
    differences: answerDifferences.length,
    differingRoutes: new Set(answerDifferences.map((d) => `${d.service} ${d.route}`)).size,
    notEmulated: new Set(open.filter((d) => ROUTE_KINDS.has(d.kind)).map((d) => `${d.service} ${d.route}`)).size,
    waived: differences.length - open.length,
    skipped: compared.filter((e) => e.skipped !== undefined).length,
  };
  return {
    format: PARITY_REPORT_FORMAT,
    version: PARITY_REPORT_VERSION,
    recording: {
      startedAt: recording.startedAt,
      upstreams: recording.upstreams,
      ...(recording.products && { products: recording.products }),
      recordedBy: recording.recordedBy,
      truncated: recording.truncated,
    },
    settings,
    summary,
    ok: open.length === 0,
    routes: [...routes.values()].sort((a, b) => cmp(a.service, b.service) || cmp(a.route, b.route)),
    differences,
    exchanges,
    waivers: waiverList,
  };
}

/** `parity: 212 exchanges, 37 routes, 4 differences in 3 routes, 1 not emulated` */
export function summaryLine(summary: ParitySummary): string {
  const parts = [
    plural(summary.exchanges, "exchange"),
    plural(summary.routes, "route"),
    `${plural(summary.differences, "difference")} in ${plural(summary.differingRoutes, "route")}`,
    `${summary.notEmulated} not emulated`,
  ];
  if (summary.waived > 0) parts.push(`${summary.waived} waived`);
  if (summary.skipped > 0) parts.push(`${summary.skipped} not compared`);
  return `parity: ${parts.join(", ")}`;
}

/** The readable report: the summary, then each route with what differs in it, exchange by exchange. */
export function formatReport(report: ParityReport): string {
  const lines = [summaryLine(report.summary)];
  const against = Object.entries(report.recording.upstreams).map(
    ([service, url]) =>
      `${service} ${url}${report.recording.products?.[service as keyof typeof report.recording.products] ? ` (${report.recording.products[service as keyof typeof report.recording.products]})` : ""}`,
  );
  if (against.length > 0) lines.push(`recorded against ${against.join(", ")}`);
  if (report.recording.truncated) lines.push("the recording was truncated (its budget reached): only the exchanges before it were compared");
  for (const route of report.routes) {
    if (route.differences === 0) continue;
    lines.push("", `${route.service} ${route.route}  (${plural(route.exchanges, "exchange")}, ${plural(route.differences, "difference")})`);
    for (const d of report.differences) {
      if (d.waived !== undefined || d.service !== route.service || d.route !== route.route) continue;
      lines.push(`  #${d.seq} ${d.method} ${d.path}: ${describeDifference(d)}`);
    }
  }
  const skipped = report.exchanges.filter((e) => e.skipped !== undefined);
  if (skipped.length > 0) lines.push("", "not compared:", ...skipped.map((e) => `  #${e.seq} ${e.method} ${e.path}: ${e.skipped}`));
  if (report.summary.waived > 0) lines.push("", `${plural(report.summary.waived, "difference")} waived (see the JSON report for each)`);
  return lines.join("\n");
}

export function describeDifference(d: Pick<ReportedDifference, "kind" | "at" | "recorded" | "standin" | "note">): string {
  const show = (value: unknown) => clip(JSON.stringify(value) ?? "undefined");
  const note = d.note ? ` (${d.note})` : "";
  switch (d.kind) {
    case "missing":
      return `${d.at} missing in standin (upstream ${show(d.recorded)})`;
    case "extra":
      return `${d.at} extra in standin (${show(d.standin)})`;
    case "order":
      return `${d.at} order: ${d.note}`;
    case "type":
      return `${d.at} type: upstream ${show(d.recorded)}, standin ${show(d.standin)}${note}`;
    case "not-emulated":
    case "unknown-path":
      return `${d.kind}: upstream ${d.recorded}, standin ${d.standin}${note}`;
    case "unanswered":
      return `unanswered: upstream ${d.recorded}${note}`;
    default:
      return `${d.at}: upstream ${show(d.recorded)}, standin ${show(d.standin)}${note}`;
  }
}

function statusOnly(answer: Answer | undefined): { status: number } | undefined {
  return answer && { status: answer.status };
}

function clip(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}…` : text;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
