/**
 * The dashboard page (served at /_standin/ui): a live view of the running
 * emulator with the clock's controls, the timeline of its tape, and a tape
 * viewer for saved tapes. `standin ui <tape>` serves the same page with the
 * tape alone. Live updates come from one change stream per page; each
 * change refreshes what is on screen with one request at a time.
 */
import { call, follow, get, post, setToken, takeTokenFromAddress, Unauthorized } from "./api.js";
import { h } from "./dom.js";
import { instant } from "./format.js";
import { isParityReport, type ParityReportDocument, parityView } from "./parity-view.js";
import { type Authentication, stateView } from "./state-view.js";
import { TimelineView } from "./timeline.js";
import type { ClockStatus, Instant, Snapshot, Timeline } from "./types.js";

type Tab = "live" | "timeline" | "tape" | "parity";

const app = document.getElementById("app")!;
let mode: "live" | "tape" = "live";
let tab: Tab = "live";
const panels = {} as Record<Tab, HTMLElement>;
const tabs = {} as Record<Tab, HTMLElement>;
const clockLine = h("div", { class: "clock-line", "aria-live": "polite" });
const status = h("span", { class: "connection" });
const message = h("p", { class: "message", role: "status" });
const liveState = h("div", { class: "live-state" });
const instantOf = (source: string) => (seq: number, at?: number) => get<Instant>(`/ui/api/instant?source=${source}&seq=${seq}${at === undefined ? "" : `&at=${at}`}`);
const runTimeline = new TimelineView(instantOf("live"));
const tapeTimeline = new TimelineView(instantOf("tape"));
// Nothing to show until a tape is opened: the drop zone alone, not an empty axis, list and state.
tapeTimeline.element.hidden = true;

async function boot(): Promise<void> {
  takeTokenFromAddress();
  let info: { mode: "live" | "tape"; tape: { name: string } | null; parity?: { name: string } };
  try {
    info = await get("/ui/api/info");
  } catch (error) {
    if (error instanceof Unauthorized) return askForToken();
    throw error;
  }
  mode = info.mode;
  layout();
  if (mode === "live") {
    select("live");
    void follow(
      (data) => onChange(data as { clock: ClockStatus }),
      (connected) => {
        status.textContent = connected ? "● live" : "○ reconnecting…";
        status.className = `connection ${connected ? "up" : "down"}`;
      },
    );
  } else {
    select("tape");
    if (info.tape) await refreshTape();
  }
  if (info.parity) {
    showParity(await get<ParityReportDocument>("/ui/api/parity"));
    if (!info.tape) select("parity");
  }
}

/** A parity report on its tab (shown once one is open). */
function showParity(report: ParityReportDocument): void {
  panels.parity.replaceChildren(parityView(report));
  tabs.parity.hidden = false;
}

function askForToken(): void {
  const input = h("input", { type: "password", id: "token", autocomplete: "off", required: true }) as HTMLInputElement;
  const form = h(
    "form",
    { class: "token-form" },
    h("h1", {}, "standin"),
    h("p", {}, "This standin was started with --control-token. Enter the token (it stays in this tab only)."),
    h("label", { for: "token" }, "control token "),
    input,
    h("button", { type: "submit" }, "Open"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    setToken(input.value);
    location.reload();
  });
  app.replaceChildren(form);
  input.focus();
}

function layout(): void {
  const names: Tab[] = mode === "live" ? ["live", "timeline", "tape", "parity"] : ["tape", "parity"];
  const titles: Record<Tab, string> = { live: "Live", timeline: "Timeline", tape: "Tape viewer", parity: "Parity report" };
  const bar = h("div", { class: "tabs", role: "tablist", "aria-label": "views" });
  for (const name of names) {
    tabs[name] = h("button", { type: "button", role: "tab", id: `tab-${name}`, "aria-controls": `panel-${name}`, onclick: () => select(name) }, titles[name]);
    bar.append(tabs[name]);
    panels[name] = h("section", { role: "tabpanel", id: `panel-${name}`, "aria-labelledby": `tab-${name}`, hidden: true });
  }
  // Arrow keys move between tabs (the ARIA tabs pattern).
  bar.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    const shown = names.filter((name) => !tabs[name].hidden);
    const next = shown[(shown.indexOf(tab) + step + shown.length) % shown.length]!;
    select(next);
    tabs[next].focus();
  });
  if (mode === "live") {
    panels.live.append(controls(), liveState);
    panels.timeline.append(runTimeline.element);
  }
  panels.tape.append(dropZone(), tapeTimeline.element);
  // No report until one is opened (standin ui --parity, or a report dropped on the tape viewer).
  tabs.parity.hidden = true;
  app.replaceChildren(
    h("header", {}, h("h1", {}, "standin"), h("span", { class: "mode" }, mode === "live" ? "live emulator" : "tape viewer (read-only)"), status, clockLine),
    bar,
    message,
    ...names.map((name) => panels[name]),
  );
}

function select(name: Tab): void {
  tab = name;
  for (const [key, button] of Object.entries(tabs)) {
    const on = key === name;
    button.setAttribute("aria-selected", String(on));
    button.tabIndex = on ? 0 : -1;
    panels[key as Tab].hidden = !on;
  }
  if (name === "live") void refreshLive();
  if (name === "timeline") void refreshRunTimeline();
}

function controls(): HTMLElement {
  const by = h("input", { id: "advance-by", value: "10s", size: 6, "aria-label": "advance by (Go duration)" }) as HTMLInputElement;
  const until = h("input", {
    id: "await-until",
    size: 36,
    placeholder: '{"deployment":{"job":"web","status":"successful"}}',
    "aria-label": "await conditions (JSON)",
  }) as HTMLInputElement;
  const auto = h("input", { type: "checkbox", id: "auto-clock" }) as HTMLInputElement;
  const act = (what: () => Promise<unknown>) => async () => {
    try {
      await what();
      message.textContent = "";
    } catch (error) {
      message.textContent = (error as Error).message;
    }
  };
  auto.addEventListener(
    "change",
    act(() => post("/clock/auto", { enabled: auto.checked })),
  );
  const form = h(
    "form",
    { class: "controls", "aria-label": "clock controls" },
    h("label", { for: "advance-by" }, "advance by "),
    by,
    h("button", { type: "submit", id: "advance" }, "Advance"),
    h("button", { type: "button", id: "next", onclick: act(() => post("/clock/next")) }, "Next timer"),
    h("label", { for: "await-until" }, " await "),
    until,
    h(
      "button",
      {
        type: "button",
        id: "await",
        onclick: act(async () => {
          const answer = await call<{ met: boolean; waited: string }>("POST", "/await", { until: JSON.parse(until.value || "{}") });
          message.textContent = `met after ${answer.waited}`;
        }),
      },
      "Await",
    ),
    h("label", { for: "auto-clock", class: "auto" }, auto, " auto clock (skip idle time)"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void act(() => post("/clock/advance", { by: by.value }))();
  });
  return form;
}

function showClock(clock: ClockStatus): void {
  const auto = document.getElementById("auto-clock") as HTMLInputElement | null;
  if (auto) auto.checked = clock.mode === "auto";
  clockLine.replaceChildren(
    h("strong", { class: "now", "data-now-ms": clock.nowMs }, clock.now),
    ` ${clock.mode}${clock.paused ? " (paused)" : ""} · ${clock.pendingTimers} timers pending` +
      (clock.nextTimerAt ? ` · next at ${clock.nextTimerAt}` : "") +
      (clock.mode === "auto" ? ` · idle skips ${clock.skips ?? 0}, locks ${clock.locks ?? 0}` : ""),
  );
}

/** A change: the clock line at once; the view on screen refreshed, one request at a time (changes meanwhile fold into one more). */
function onChange(data: { clock: ClockStatus }): void {
  showClock(data.clock);
  if (tab === "live") void refreshLive();
  if (tab === "timeline") void refreshRunTimeline();
}

const refreshLive = coalesced(async () => {
  const [snapshot, clock, journal] = await Promise.all([
    get<Snapshot>("/snapshot"),
    get<ClockStatus>("/clock"),
    get<{ requests: Array<{ at: string; service: string; method: string; path: string; status: number }> }>("/requests?limit=200"),
  ]);
  showClock(clock);
  const authentications: Authentication[] = journal.requests
    .filter((r) => r.service === "echo" && (r.path.startsWith("/auth/") || r.path.startsWith("/echo")))
    .slice(-8)
    .reverse()
    .map((r) => ({ at: Date.parse(r.at), method: r.method, path: r.path, status: r.status }));
  liveState.replaceChildren(h("p", { class: "muted" }, `state at ${instant(snapshot.clock.nowMs)}, index ${snapshot.store.index}`), stateView(snapshot, authentications));
});

const refreshRunTimeline = coalesced(async () => {
  try {
    // Only what is new since the items on screen; all of it again when the tape began anew (a reset).
    const known = runTimeline.current;
    let answer = await get<Timeline>(`/ui/api/timeline?source=live&since=${known?.items.length ?? 0}`);
    if (known && answer.session !== known.session && answer.from > 0) answer = await get<Timeline>("/ui/api/timeline?source=live");
    runTimeline.set(answer);
  } catch (error) {
    runTimeline.element.replaceChildren(h("p", { class: "error" }, (error as Error).message));
  }
});

async function refreshTape(): Promise<void> {
  try {
    tapeTimeline.set(await get<Timeline>("/ui/api/timeline?source=tape"));
  } catch (error) {
    message.textContent = (error as Error).message;
  }
}

function dropZone(): HTMLElement {
  const input = h("input", { type: "file", id: "tape-file", accept: ".json,application/json" }) as HTMLInputElement;
  const open = async (file: File) => {
    message.textContent = `opening ${file.name}…`;
    try {
      const text = await file.text();
      const report = parityReportIn(text);
      if (report) {
        showParity(report);
        select("parity");
        message.textContent = `${file.name}: a parity report of ${report.summary.exchanges} exchanges`;
        return;
      }
      const timeline = await call<Timeline>("POST", `/ui/api/tape?name=${encodeURIComponent(file.name)}`, text, true);
      tapeTimeline.set(timeline);
      message.textContent = `${file.name}: ${timeline.entries} entries`;
    } catch (error) {
      message.textContent = `${file.name}: ${(error as Error).message}`;
    }
  };
  input.addEventListener("change", () => input.files?.[0] && void open(input.files[0]));
  const zone = h(
    "div",
    { class: "drop" },
    h("label", { for: "tape-file" }, "Open a tape (GET /_standin/tape, the CI artifact) or a parity report (standin parity --json), or drop it here: "),
    input,
  );
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    const file = event.dataTransfer?.files[0];
    if (file) void open(file);
  });
  return zone;
}

/** A dropped file that is a parity report (shown in the page; nothing to replay), else undefined (a tape, sent to standin). */
function parityReportIn(text: string): ParityReportDocument | undefined {
  try {
    const document: unknown = JSON.parse(text);
    return isParityReport(document) ? document : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Runs `work` at most once at a time; calls while it runs make it run once
 * more afterwards, after a pause of at least twice as long as the last run
 * took (and 200 ms): a page never keeps a busy emulator reading its own
 * snapshot more than a third of the time.
 */
function coalesced(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  const run = async (): Promise<void> => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        const began = performance.now();
        try {
          await work();
        } catch (error) {
          message.textContent = (error as Error).message;
        }
        if (again) await new Promise((resolve) => setTimeout(resolve, Math.max(200, 2 * (performance.now() - began))));
      } while (again);
    })();
    try {
      await running;
    } finally {
      running = undefined;
    }
  };
  return run;
}

boot().catch((error: unknown) => {
  app.replaceChildren(h("p", { class: "error" }, `standin dashboard: ${(error as Error).message}`));
});
