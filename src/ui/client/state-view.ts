/**
 * One state, drawn: per service, what a person looks for first. Used for
 * the live emulator (its snapshot) and for the state at an instant (the
 * snapshot rebuilt from the tape), so both read the same way.
 */
import { badge, h, s, table } from "./dom.js";
import { duration, goDuration, instant, short } from "./format.js";
import type { Snapshot, Timer } from "./types.js";

// biome-ignore lint/suspicious/noExplicitAny: rows are the products' JSON documents, read field by field as their APIs name them
type Row = Record<string, any>;

export interface Authentication {
  at: number;
  method: string;
  path: string;
  status: number;
}

function rows(snapshot: Snapshot, table: string): Row[] {
  return Object.values(snapshot.store.tables[table]?.rows ?? {}) as Row[];
}

export function stateView(snapshot: Snapshot, authentications?: Authentication[]): HTMLElement {
  const now = snapshot.clock.nowMs;
  return h(
    "div",
    { class: "state" },
    section("scheduler", "Scheduler", scheduler(snapshot)),
    section("registry", "Registry", registry(snapshot, now)),
    section("echo", "Echo", echo(snapshot, authentications)),
    section("timers", "Pending timers", timers(snapshot.clock.timers, now)),
  );
}

function section(id: string, title: string, body: HTMLElement[]): HTMLElement {
  return h("section", { class: `service ${id}`, "aria-labelledby": `h-${id}` }, h("h2", { id: `h-${id}` }, title), ...body);
}

function scheduler(snapshot: Snapshot): HTMLElement[] {
  const jobs = rows(snapshot, "scheduler.jobs");
  const deployments = rows(snapshot, "scheduler.deployments").sort((a, b) => b.CreateIndex - a.CreateIndex);
  const allocs = rows(snapshot, "scheduler.allocs").sort((a, b) => a.CreateIndex - b.CreateIndex);
  const evals = rows(snapshot, "scheduler.evals").sort((a, b) => b.CreateIndex - a.CreateIndex);
  const out: HTMLElement[] = [];
  out.push(h("h3", {}, "Jobs"));
  out.push(
    table(
      ["job", "type", "status", "version", "stable"],
      jobs.map((j) => [j.ID, j.Type, badge(j.Status ?? "pending"), `v${j.Version}`, j.Stable ? "yes" : "no"]),
      "no jobs",
    ),
  );
  if (deployments.length) {
    out.push(h("h3", {}, "Deployments"));
    for (const d of deployments.slice(0, 6)) out.push(deploymentCard(d, allocs));
  }
  out.push(h("h3", {}, "Allocations"));
  out.push(
    table(
      ["allocation", "node", "version", "desired", "client", "health", "canary"],
      allocs.map((a) => [
        h("span", { title: a.ID }, a.Name),
        a.NodeName,
        `v${a.JobVersion}`,
        a.DesiredStatus,
        badge(a.ClientStatus),
        a.DeploymentStatus?.Healthy === true ? badge("healthy") : a.DeploymentStatus?.Healthy === false ? badge("unhealthy") : "–",
        a.DeploymentStatus?.Canary ? badge("canary") : "",
      ]),
      "no allocations",
    ),
  );
  out.push(h("h3", {}, "Evaluations"));
  out.push(
    table(
      ["evaluation", "job", "triggered by", "status"],
      evals.slice(0, 20).map((e) => [h("code", { title: e.ID }, short(e.ID)), e.JobID, e.TriggeredBy, badge(e.Status)]),
      "no evaluations",
    ),
  );
  out.push(h("h3", {}, "Nodes"));
  out.push(
    table(
      ["node", "status", "eligibility", "drain"],
      rows(snapshot, "scheduler.nodes").map((n) => [n.Name, badge(n.Status), n.SchedulingEligibility, n.Drain ? badge("draining") : "no"]),
    ),
  );
  return out;
}

/** A deployment at a glance: per task group, a bar of healthy / placed / desired, canaries marked. */
function deploymentCard(d: Row, allocs: Row[]): HTMLElement {
  const groups = Object.entries((d.TaskGroups ?? {}) as Record<string, Row>);
  return h(
    "div",
    { class: "card deployment", "data-status": d.Status, "data-version": d.JobVersion },
    h("div", { class: "card-head" }, h("strong", {}, `${d.JobID} v${d.JobVersion}`), " ", badge(d.Status), " ", h("code", { title: d.ID }, short(d.ID))),
    h("p", { class: "muted" }, d.StatusDescription),
    ...groups.map(([name, g]) => {
      const canaryAllocs = allocs.filter((a) => a.DeploymentID === d.ID && a.TaskGroup === name && a.DeploymentStatus?.Canary);
      return h(
        "div",
        { class: "group" },
        h(
          "span",
          { class: "group-name" },
          `${name}: ${g.HealthyAllocs}/${g.DesiredTotal} healthy, ${g.PlacedAllocs} placed` +
            (g.DesiredCanaries ? `, canaries ${canaryAllocs.length}/${g.DesiredCanaries}${g.Promoted ? " promoted" : ""}` : "") +
            (g.UnhealthyAllocs ? `, ${g.UnhealthyAllocs} unhealthy` : ""),
        ),
        progressBar(g),
      );
    }),
  );
}

function progressBar(g: Row): SVGElement {
  const total = Math.max(1, g.DesiredTotal ?? 1);
  const width = 320;
  const unit = width / total;
  const placed = Math.min(total, g.PlacedAllocs ?? 0);
  const healthy = Math.min(placed, g.HealthyAllocs ?? 0);
  const unhealthy = Math.min(placed - healthy, g.UnhealthyAllocs ?? 0);
  return s(
    "svg",
    { class: "progress", width, height: 14, viewBox: `0 0 ${width} 14`, role: "img", "aria-label": `${healthy} healthy, ${placed} placed of ${total}` },
    s("rect", { class: "bar-bg", x: 0, y: 0, width, height: 14, rx: 3 }),
    s("rect", { class: "bar-placed", x: 0, y: 0, width: placed * unit, height: 14, rx: 3 }),
    s("rect", { class: "bar-healthy", x: 0, y: 0, width: healthy * unit, height: 14, rx: 3 }),
    unhealthy ? s("rect", { class: "bar-unhealthy", x: healthy * unit, y: 0, width: unhealthy * unit, height: 14 }) : null,
    ...Array.from({ length: total - 1 }, (_, i) => s("line", { class: "bar-tick", x1: (i + 1) * unit, x2: (i + 1) * unit, y1: 0, y2: 14 })),
  );
}

function registry(snapshot: Snapshot, now: number): HTMLElement[] {
  const sessions = rows(snapshot, "registry.sessions");
  const ttlTimers = new Map(snapshot.clock.timers.filter((t) => t.kind === "registry.session-ttl").map((t) => [t.subject, t.at]));
  const kv = rows(snapshot, "registry.kv").sort((a, b) => (a.Key < b.Key ? -1 : 1));
  const delays = Object.entries(snapshot.store.tables["registry.lockdelay"]?.rows ?? {}) as Array<[string, Row]>;
  const nameOf = new Map(sessions.map((x) => [x.ID, x.Name || short(x.ID)]));
  return [
    h("h3", {}, "Sessions"),
    table(
      ["session", "name", "TTL", "expires"],
      sessions.map((x) => {
        const expiry = ttlTimers.get(x.ID);
        return [
          h("code", { title: `${x.ID} (behavior ${x.Behavior})` }, short(x.ID)),
          x.Name,
          x.TTL || "–",
          expiry === undefined ? "no TTL" : countdown(now, expiry, 2 * goDuration(x.TTL), "session-bar"),
        ];
      }),
      "no sessions",
    ),
    h("h3", {}, "KV"),
    table(
      ["key", "value", "lock holder", "flags"],
      kv.map((k) => [h("code", {}, k.Key), value(k.Value), k.Session ? `${nameOf.get(k.Session) ?? short(k.Session)} (${short(k.Session)})` : "", k.Flags]),
      "no keys",
    ),
    ...(delays.length
      ? [
          h("h3", {}, "Lock delays"),
          table(
            ["key", "until"],
            delays.map(([key, d]) => [h("code", {}, key), d.until > now ? countdown(now, d.until, d.until - now, "delay-bar") : "over"]),
          ),
        ]
      : []),
    h("h3", {}, "Nodes and checks"),
    table(
      ["node", "address", "checks"],
      rows(snapshot, "registry.nodes").map((n) => [
        n.Node,
        n.Address,
        h(
          "span",
          {},
          ...rows(snapshot, "registry.checks")
            .filter((c) => c.Node === n.Node)
            .map((c) => badge(`${c.CheckID} ${c.Status}`, c.Status)),
        ),
      ]),
    ),
  ];
}

/** Time left to `until`, in words and as a bar that empties as virtual time passes (full = `span`). */
function countdown(now: number, until: number, span: number, kind: string): HTMLElement {
  const left = Math.max(0, until - now);
  const width = 120;
  const fill = span > 0 ? Math.max(0, Math.min(1, left / span)) * width : 0;
  return h(
    "span",
    { class: "countdown", "data-left-ms": left, title: `at ${instant(until)}` },
    s(
      "svg",
      { class: kind, width, height: 10, viewBox: `0 0 ${width} 10`, "aria-hidden": "true" },
      s("rect", { class: "bar-bg", width, height: 10, rx: 2 }),
      s("rect", { class: "bar-left", width: fill, height: 10, rx: 2 }),
    ),
    h("span", { title: instant(until) }, `in ${duration(left)}`),
  );
}

function value(base64: string | null): string {
  if (base64 === null) return "null";
  try {
    const text = atob(base64);
    return text.length > 60 ? `${text.slice(0, 59)}…` : text;
  } catch {
    return base64;
  }
}

function echo(snapshot: Snapshot, authentications?: Authentication[]): HTMLElement[] {
  const config = (snapshot.store.tables["echo.config"]?.rows?.["proxy"] ?? {}) as Row;
  const schemes = Object.entries((config.schemes ?? {}) as Record<string, Row>);
  const out = [
    h("p", {}, `${config.proxy ?? "esp"} for ${config.serviceName ?? "?"}; API keys: `, ...(config.apiKeys ?? []).map((k: string) => h("code", { class: "key" }, k))),
    h("h3", {}, "Token schemes"),
    table(
      ["scheme", "issuer", "audiences"],
      schemes.map(([name, x]) => [name, x.issuer, (x.audiences ?? []).join(", ")]),
    ),
  ];
  if (authentications) {
    out.push(h("h3", {}, "Recent authentications"));
    out.push(
      table(
        ["at", "request", "status"],
        authentications.map((a) => [instant(a.at), `${a.method} ${a.path}`, badge(String(a.status), a.status < 400 ? "ok" : "failed")]),
        "none yet",
      ),
    );
  }
  return out;
}

function timers(list: Timer[], now: number): HTMLElement[] {
  const sorted = [...list].sort((a, b) => a.at - b.at || a.id - b.id);
  return [
    table(
      ["at", "in", "kind", "subject"],
      sorted.slice(0, 40).map((t) => [instant(t.at), duration(t.at - now), t.kind, h("code", {}, t.subject)]),
      "no pending timers",
    ),
  ];
}
