/**
 * The timeline: every tape entry and what it caused on one virtual-time
 * axis, one lane per service (sessions' lifetimes drawn as bars in the
 * registry's lane), a filterable list under it, and the state right after
 * the chosen entry with what that entry changed. Arrow keys move through
 * the list (and the axis); Enter or a click shows the state.
 */
import { badge, h, s } from "./dom.js";
import { clockTime, instant } from "./format.js";
import { stateView } from "./state-view.js";
import type { Instant, Timeline, TimelineItem } from "./types.js";

const LANES = ["scheduler", "registry", "echo", "clock", "scenario"];
const WIDTH = 1000;
const LABELS = 90;
const LANE_HEIGHT = 30;
/** Axis ticks fall on round instants: the first of these steps that makes at most 8 of them. */
const TICK_STEPS = [1, 10, 100, 1000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 86_400_000];
/** The list shows at most this many rows around the chosen one (the axis shows them all). */
const LIST_WINDOW = 400;

/** What the axis's marks mean: each swatch is drawn with the very classes the marks get, so its colour is theirs. */
const LEGEND: ReadonlyArray<[marks: string, meaning: string]> = [
  ["mark request", "a request to a service, or a fault set over the control API"],
  ["mark event", "an event a service published"],
  ["mark timer", "a timer that fired"],
  ["mark clock", "a clock move, an action, a fixture applied, a snapshot restored"],
  ["mark diverged", "diverged on replay"],
  ["mark chosen", "the entry shown below"],
  ["session-life", "a session's life (registry lane)"],
];

function legend(): HTMLElement {
  return h(
    "ul",
    { class: "legend", "aria-label": "what the marks mean" },
    ...LEGEND.map(([marks, meaning]) => {
      const swatch =
        marks === "session-life"
          ? s("rect", { class: marks, x: 1, y: 6, width: 14, height: 3 })
          : s("circle", { class: marks, cx: 8, cy: 7.5, r: marks.includes("chosen") ? 5 : 3.5 });
      return h("li", { "data-marks": marks }, s("svg", { width: 16, height: 15, viewBox: "0 0 16 15", "aria-hidden": "true" }, swatch), meaning);
    }),
  );
}

export class TimelineView {
  readonly element = h("div", { class: "timeline" });
  private timeline: Timeline | undefined;
  private shown: TimelineItem[] = [];
  private chosen = -1;
  private filter = "";
  private readonly hidden = new Set<string>();
  private readonly axis = h("div", { class: "axis", tabindex: 0, role: "group", "aria-label": "timeline axis: left and right arrows move between events" });
  private readonly list = h("ol", { class: "events", tabindex: 0, role: "listbox", "aria-label": "events: up and down arrows choose, Enter shows the state" });
  private readonly summary = h("div", { class: "timeline-summary" });
  private readonly detail = h("div", { class: "instant", "aria-live": "polite" });
  private loading = 0;

  /** `at`: for what happened inside a clock move, the instant to see the state at. */
  constructor(private readonly loadInstant: (seq: number, at?: number) => Promise<Instant>) {
    const search = h("input", { type: "search", placeholder: "filter: path, event, subject…", "aria-label": "filter events", class: "filter" }) as HTMLInputElement;
    search.addEventListener("input", () => {
      this.filter = search.value.trim().toLowerCase();
      this.render();
    });
    const lanes = h(
      "div",
      { class: "lanes", role: "group", "aria-label": "lanes shown" },
      ...LANES.map((lane) => {
        const box = h("input", { type: "checkbox", checked: true, id: `lane-${lane}` }) as HTMLInputElement;
        box.addEventListener("change", () => {
          if (box.checked) this.hidden.delete(lane);
          else this.hidden.add(lane);
          this.render();
        });
        return h("label", { for: `lane-${lane}`, class: `lane-toggle ${lane}` }, box, lane);
      }),
    );
    const keys = (step: (index: number) => number) => (event: Event) => {
      const key = (event as KeyboardEvent).key;
      const moves: Record<string, number> = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1, PageDown: 20, PageUp: -20, Home: -Infinity, End: Infinity };
      if (key === "Enter" && this.chosen >= 0) return void this.show();
      if (!(key in moves)) return;
      event.preventDefault();
      this.choose(step(moves[key]!));
    };
    const move = (by: number) => Math.max(0, Math.min(this.shown.length - 1, by === -Infinity ? 0 : by === Infinity ? this.shown.length - 1 : Math.max(this.chosen, 0) + by));
    this.list.addEventListener("keydown", keys(move));
    this.axis.addEventListener("keydown", keys(move));
    this.element.append(this.summary, h("div", { class: "toolbar" }, search, lanes), this.axis, legend(), h("div", { class: "split" }, this.list, this.detail));
  }

  /** The timeline on screen (undefined before the first). */
  get current(): Timeline | undefined {
    return this.timeline;
  }

  /** A timeline, or (`from` above 0, the same session) the items that follow those on screen. */
  set(timeline: Timeline): void {
    // Shown from its first timeline on (the tape viewer's stays hidden until a tape is opened: no empty boxes).
    this.element.hidden = false;
    const previous = this.shown[this.chosen];
    const known = this.timeline;
    this.timeline = known && timeline.from > 0 && timeline.session === known.session ? { ...timeline, items: known.items.concat(timeline.items) } : timeline;
    this.render();
    if (previous) this.chosen = this.shown.findIndex((i) => i.seq === previous.seq && i.label === previous.label && i.at === previous.at);
    this.renderList();
    this.renderAxis();
  }

  /** Chooses the first item of entry `seq` and shows the state after it. */
  async jumpTo(seq: number): Promise<void> {
    const index = this.shown.findIndex((item) => item.seq === seq);
    if (index >= 0) {
      this.choose(index);
      await this.show();
    }
  }

  private render(): void {
    const t = this.timeline;
    if (!t) return;
    this.shown = t.items.filter(
      (item) =>
        !this.hidden.has(item.lane) && (!this.filter || `${item.label} ${item.subject ?? ""} ${item.lane} ${item.kind} ${item.status ?? ""}`.toLowerCase().includes(this.filter)),
    );
    this.chosen = Math.min(this.chosen, this.shown.length - 1);
    this.summary.replaceChildren(...this.summaryParts(t));
    this.renderAxis();
    this.renderList();
  }

  private summaryParts(t: Timeline): Array<HTMLElement | string> {
    const parts: Array<HTMLElement | string> = [
      h(
        "span",
        {},
        `${t.source === "live" ? "this run's tape" : "tape"}: ${t.entries} entries, ${t.items.length} events${t.itemsDropped ? ` (${t.itemsDropped} more left out)` : ""}; ${this.shown.length} shown`,
      ),
    ];
    if (t.truncated) parts.push(badge("truncated", "failed"));
    const first = t.divergences[0];
    if (first) {
      const jump = h("button", { type: "button", class: "divergence-jump", onclick: () => void this.jumpTo(Math.max(first.seq, 0)) }, "show it");
      parts.push(
        h(
          "div",
          { class: "divergence", role: "alert" },
          h("strong", {}, `Replay diverged (${t.divergences.length}); the first at #${first.seq} ${first.entry}: `),
          first.what,
          " ",
          jump,
        ),
      );
    } else if (t.report) parts.push(h("div", { class: "replay-ok" }, `Replay matches: end state hash ${t.report.actual.slice(0, 16)}…`));
    return parts;
  }

  private renderAxis(): void {
    const t = this.timeline;
    if (!t) return;
    const lanes = LANES.filter((lane) => !this.hidden.has(lane));
    const height = lanes.length * LANE_HEIGHT + 24;
    const times = this.shown.map((i) => i.at);
    const t0 = Math.min(t.start.at, ...times);
    const t1 = Math.max(t0 + 1000, ...times);
    const x = (at: number) => LABELS + ((at - t0) / (t1 - t0)) * (WIDTH - LABELS - 10);
    const y = (lane: string) => lanes.indexOf(lane) * LANE_HEIGHT + LANE_HEIGHT / 2;
    const diverged = new Set(t.divergences.map((d) => d.seq));
    const svg = s("svg", { viewBox: `0 0 ${WIDTH} ${height}`, class: "axis-svg", role: "img", "aria-label": `virtual time from ${instant(t0)} to ${instant(t1)}` });
    for (const lane of lanes) {
      svg.append(s("text", { x: 4, y: y(lane) + 4, class: `lane-label ${lane}` }, lane), s("line", { x1: LABELS, x2: WIDTH - 10, y1: y(lane), y2: y(lane), class: "lane-line" }));
    }
    // Sessions' lifetimes: from creation to invalidation (or on past the end).
    if (lanes.includes("registry")) {
      const opened = new Map<string, number>();
      const bars: Array<[number, number, string]> = [];
      for (const item of t.items) {
        if (item.label === "session.created" && item.subject) opened.set(item.subject, item.at);
        if (item.label === "session.invalidated" && item.subject && opened.has(item.subject)) {
          bars.push([opened.get(item.subject)!, item.at, item.subject]);
          opened.delete(item.subject);
        }
      }
      for (const [id, from] of opened) bars.push([from, t1, id]);
      bars.forEach(([from, to, id], i) => {
        svg.append(
          s(
            "rect",
            { class: "session-life", x: x(from), y: y("registry") + 6 + (i % 3) * 3, width: Math.max(2, x(to) - x(from)), height: 3 },
            s("title", {}, `session ${id}: ${clockTime(from)} → ${clockTime(to)}`),
          ),
        );
      });
    }
    const step = TICK_STEPS.find((ms) => (t1 - t0) / ms <= 8) ?? (t1 - t0) / 8;
    for (let at = Math.ceil(t0 / step) * step; at <= t1; at += step) {
      svg.append(
        s("line", { x1: x(at), x2: x(at), y1: 0, y2: height - 20, class: "tick-line" }),
        s("text", { x: x(at), y: height - 6, class: "tick", "text-anchor": "middle" }, clockTime(at)),
      );
    }
    // One mark per lane and pixel column (the chosen and the diverged ones always): a long run stays a few thousand marks, not tens of thousands.
    const drawn = new Set<string>();
    this.shown.forEach((item, index) => {
      if (!lanes.includes(item.lane)) return;
      const column = `${item.lane} ${Math.round(x(item.at))}`;
      if (drawn.has(column) && index !== this.chosen && !diverged.has(item.seq)) return;
      drawn.add(column);
      const mark = s(
        "circle",
        {
          cx: x(item.at),
          cy: y(item.lane),
          r: index === this.chosen ? 6 : 3.5,
          class: `mark ${item.kind}${diverged.has(item.seq) ? " diverged" : ""}${index === this.chosen ? " chosen" : ""}`,
        },
        s("title", {}, `${clockTime(item.at)} ${item.label}`),
      );
      mark.addEventListener("click", () => {
        this.choose(index);
        void this.show();
      });
      svg.append(mark);
    });
    this.axis.replaceChildren(svg);
  }

  private renderList(): void {
    const t = this.timeline;
    if (!t) return;
    const diverged = new Set(t.divergences.map((d) => d.seq));
    const from = Math.max(0, Math.min(this.chosen - LIST_WINDOW / 2, this.shown.length - LIST_WINDOW));
    const window = this.shown.slice(from, from + LIST_WINDOW);
    this.list.replaceChildren(
      ...window.map((item, offset) => {
        const index = from + offset;
        const row = h(
          "li",
          {
            role: "option",
            id: `event-${index}`,
            "aria-selected": index === this.chosen ? "true" : "false",
            class: `event ${item.lane} ${item.kind}${diverged.has(item.seq) ? " diverged" : ""}`,
            "data-seq": item.seq,
            "data-kind": item.kind,
          },
          h("time", {}, clockTime(item.at)),
          h("span", { class: `lane ${item.lane}` }, item.lane),
          h("span", { class: "label" }, item.label, item.subject ? h("code", {}, ` ${item.subject}`) : null),
          item.status !== undefined ? badge(String(item.status), item.status < 400 ? "ok" : "failed") : h("span", {}),
        );
        row.addEventListener("click", () => {
          this.choose(index);
          void this.show();
        });
        return row;
      }),
    );
    if (this.chosen >= 0) {
      this.list.setAttribute("aria-activedescendant", `event-${this.chosen}`);
      this.list.querySelector(`#event-${this.chosen}`)?.scrollIntoView({ block: "nearest" });
    }
  }

  private choose(index: number): void {
    if (index < 0 || index >= this.shown.length) return;
    this.chosen = index;
    this.renderAxis();
    this.renderList();
  }

  /** Loads the state after the chosen item's entry (the latest request wins). */
  private async show(): Promise<void> {
    const item = this.shown[this.chosen];
    if (!item) return;
    const ticket = ++this.loading;
    this.detail.replaceChildren(h("p", { class: "muted" }, `rebuilding the state of #${item.seq}…`));
    try {
      // A timer or an event may have happened inside a clock move: ask for the state at its own instant.
      const answer = await this.loadInstant(item.seq, item.kind === "timer" || item.kind === "event" ? item.at : undefined);
      if (ticket === this.loading) this.detail.replaceChildren(...instantView(answer));
    } catch (error) {
      if (ticket === this.loading) this.detail.replaceChildren(h("p", { class: "error" }, (error as Error).message));
    }
  }
}

function instantView(answer: Instant): HTMLElement[] {
  const d = answer.diff;
  const changes: HTMLElement[] = [];
  if (d.clock.from !== d.clock.to) changes.push(h("li", {}, `clock ${instant(d.clock.from)} → ${instant(d.clock.to)}`));
  for (const row of d.rows)
    changes.push(
      h(
        "li",
        { class: `change ${row.change}` },
        badge(row.change),
        ` ${row.table} `,
        h("code", {}, row.key.replace(/\u0000/g, "/")),
        row.fields ? h("ul", {}, ...Object.entries(row.fields).map(([field, [was, is]]) => h("li", {}, h("code", {}, field || "(value)"), `: ${was} → ${is}`))) : null,
      ),
    );
  if (d.rowsDropped) changes.push(h("li", {}, `… and ${d.rowsDropped} more rows`));
  for (const timer of d.timers.added) changes.push(h("li", { class: "change added" }, badge("timer"), ` ${timer.kind} ${timer.subject} at ${instant(timer.at)}`));
  for (const timer of d.timers.removed) changes.push(h("li", { class: "change removed" }, badge("timer gone", "removed"), ` ${timer.kind} ${timer.subject}`));
  const raw = h("details", { class: "raw" }, h("summary", {}, "snapshot (JSON, as GET /_standin/snapshot answered then)"));
  raw.addEventListener("toggle", () => {
    if (raw.childElementCount === 1) raw.append(h("pre", { class: "snapshot-json" }, JSON.stringify(answer.snapshot, null, 2)));
  });
  return [
    h("h2", {}, answer.during ? `State at ${instant(answer.at)}, during #${answer.seq}: ${answer.entry}` : `State after #${answer.seq}: ${answer.entry}`),
    h("p", { class: "instant-meta" }, `${instant(answer.at)} · index ${answer.index} · state hash `, h("code", { class: "state-hash" }, answer.stateHash)),
    h("h3", {}, "What it changed"),
    changes.length ? h("ul", { class: "diff" }, ...changes) : h("p", { class: "empty" }, "nothing"),
    raw,
    stateView(answer.snapshot),
  ];
}
