/**
 * Nomad's event stream (`GET /v1/event/stream`): the event broker and its
 * NDJSON endpoint (command/agent/event_endpoint.go, nomad/stream/*,
 * nomad/state/events.go).
 *
 * Events come from the state, not from the engine: every committed write
 * that changed scheduler rows becomes one batch at the write's index, one
 * event per changed row (rows whose ModifyIndex is the write's index), as
 * Nomad turns each raft transaction's memdb changes into events. Nomad names
 * every event of a transaction after the transaction's message type
 * (JobRegistered, PlanResult, AllocationUpdated, …); the emulator learns
 * what a write was from the journal notes the engine records while it runs
 * (`job.registered`, `eval.complete`, …) and falls back on the table.
 *
 * Node pools (topic NodePool) and native service registrations (topic
 * Service) are compared with the rows the previous batch saw, so a deleted
 * row's event carries the row as it was: NodePoolUpserted / NodePoolDeleted
 * (a pool a node registration creates is named after that registration, as
 * its transaction's type names every change in it), ServiceRegistration /
 * ServiceDeregistration.
 *
 * The last EVENT_BUFFER_SIZE batches are kept (Nomad's `event_buffer_size`
 * default) so `index=` can replay them. A restore or reset empties the buffer
 * and ends every open stream (the indexes they followed may mean something else
 * now). Heartbeats (`{}`) are ephemeral timers on the virtual clock.
 *
 * This file is the broker; stream-event.ts turns a changed row into its event
 * and encodes a batch's frame, stream-endpoint.ts answers the HTTP request.
 */
import type { EventRecorder, ServiceContext } from "../../core/context.js";
import type { Commit } from "../../core/store.js";
import { ACL_TABLES, policyView, tokenView, type PolicyRow, type TokenRow } from "../acl/acl.js";
import { TABLES, type Json, type NodeRow, type SchedulerState } from "../state/model.js";
import { NODE_POOLS_TABLE, type NodePoolRow } from "../nodes/node-pools.js";
import { SERVICE_REGISTRATIONS_TABLE, type ServiceRegistrationRow } from "../services/service-registrations.js";
import { SharedFrames, type BatchFrames } from "./batch-frames.js";
import { StreamBudget } from "./stream-budget.js";
import { brokerWork, eventType, filterEvents, nodeEventType, toEvent, type EventBatch, type Row, type StreamEvent, type SubscribeRequest } from "./stream-event.js";

export { EVENT_STREAMS_BUDGET_BYTES, STREAM_BACKLOG_BYTES } from "./stream-budget.js";

/** Nomad's default `event_buffer_size`: batches (one per raft index) kept for replay. */
export const EVENT_BUFFER_SIZE = 100;
/** JsonStream's heartbeat interval (Nomad 1.1+; 30 s before). */
export const HEARTBEAT_MS = 10_000;
/**
 * Encoded frames a stream queues for its client before further batches wait
 * in the broker (as references to its own batches): what a socket's buffers
 * would take from Nomad before its subscriber blocks.
 */
export const STREAM_SLACK_BYTES = 1024 * 1024;
/** Unread bytes past which a stream's heartbeats wait for the client to read (see openStream). */
export const HEARTBEAT_SLACK_BYTES = 64 * 1024;
/**
 * What a subscriber left behind gets last (nomad/stream/event_buffer.go: its
 * buffer item was dropped), appended to the body without a newline as
 * Nomad's HTTP handler writes an error after the stream has begun. Nomad's
 * clients subscribe again from the last index they saw.
 */
export const EVENT_DROPPED = "event dropped from buffer";
/** What a subscriber whose token no longer allows its topics gets last (stream.ErrSubscriptionClosed). */
export const SUBSCRIPTION_CLOSED = "subscription closed by server, client should resubscribe";

/** ACL rows as the last batch saw them: a deletion's event carries the row as it was. */
interface AclSeen {
  tokens: Map<string, TokenRow>;
  policies: Map<string, PolicyRow>;
}

/** Tables in the order their events appear within a batch. */
const EVENT_TABLES = [TABLES.nodes, TABLES.jobs, TABLES.deployments, TABLES.allocs, TABLES.evals] as const;

const NOTE_TYPES = new Set([
  "job.registered",
  "job.stopped",
  "job.purged",
  "job.periodic-launch",
  "eval.complete",
  "alloc.transition",
  "deployment.promoted",
  "deployment.alloc-health",
  "deployment.successful",
  "deployment.failed",
  "deployment.cancelled",
  "node.updated",
  "node.purged",
  "node.collected",
  "alloc.desired-transition",
  "evals.deleted",
]);

/** Where a subscription's frames go: the stream, which takes them while its client keeps up. */
export interface FrameSink {
  /** Whether another frame may be queued now (what is queued is little enough for the client to be keeping up). */
  hasRoom(): boolean;
  /** One encoded line (`{"Events":…,"Index":…}` and its newline): the same bytes every stream taking it is given. */
  write(line: Uint8Array): void;
  /** Ends the stream after what it was sent, then `lastWords` when given. */
  close(lastWords?: string): void;
  /** Ends the stream at once, what it holds unread discarded, with Nomad's "event dropped from buffer". */
  drop(): void;
}

/** A batch a subscriber's filter let through and its stream has not taken yet. */
interface Waiting {
  readonly frames: BatchFrames;
  readonly events: readonly StreamEvent[];
}

interface Subscriber {
  readonly request: SubscribeRequest;
  readonly sink: FrameSink;
  /**
   * Batches waiting for the stream to have room, oldest first. They are the
   * broker's own batches (no copies), encoded only when the stream takes
   * them; more than EVENT_BUFFER_SIZE waiting is a subscriber the broker's
   * buffer has left behind, and it is dropped as Nomad drops it.
   */
  waiting: Waiting[];
}

/** What a subscription gives its stream: a way to end it, and to ask for more frames once the client has read. */
export interface Subscription {
  unsubscribe(): void;
  /** Moves waiting batches to the stream while it has room. */
  pump(): void;
}

export class EventBroker {
  private readonly buffer: EventBatch[] = [];
  private readonly subscribers = new Set<Subscriber>();
  private notes: string[] = [];
  /** Nodes as the last batch saw them (what changed on a node names its event). */
  private readonly nodesSeen = new Map<string, NodeRow>();
  private readonly aclSeen: AclSeen = { tokens: new Map(), policies: new Map() };
  /** Node pools and service registrations as the last batch saw them (keyed as their tables are). */
  private poolsSeen = new Map<string, NodePoolRow>();
  private servicesSeen = new Map<string, ServiceRegistrationRow>();
  private servicesWrittenAt: ((index: string) => ServiceRegistrationRow[]) | undefined;
  private state: SchedulerState | undefined;
  /** Table → the rows a write at an index left (see attach). */
  private writtenAt = new Map<string, (index: string) => Row[]>();
  /** What the open streams may hold unread (each, and together). */
  readonly streams = new StreamBudget();
  /** Each batch's encoded lines while a subscriber still needs them. */
  private readonly frames = new SharedFrames();

  constructor(private readonly ctx: ServiceContext) {
    ctx.store.onCommit((commit) => this.onCommit(commit));
    ctx.store.onRestore(() => this.reset());
    ctx.clock.onRestore(() => this.reset());
  }

  /** The service context the scheduler should use: its journal notes also tell the broker what each write was. */
  context(): ServiceContext {
    const outer = this.ctx;
    const events: EventRecorder = {
      record: (type, fields) => {
        this.note(type);
        outer.events.record(type, fields);
      },
    };
    return { ...outer, events };
  }

  attach(state: SchedulerState): void {
    this.state = state;
    // Rows by the index that last wrote them, kept by the store as rows change: a write's rows are found
    // without reading every row of its tables (a scan per write made a clock advance quadratic).
    const byModifyIndex = <T extends Json>(table: { groupBy(keyOf: (row: T) => string): (key: string) => T[] }) =>
      table.groupBy((row) => String(row.ModifyIndex)) as unknown as (key: string) => Row[];
    this.writtenAt = new Map([
      [TABLES.nodes, byModifyIndex(state.nodes)],
      [TABLES.jobs, byModifyIndex(state.jobs)],
      [TABLES.deployments, byModifyIndex(state.deployments)],
      [TABLES.allocs, byModifyIndex(state.allocs)],
      [TABLES.evals, byModifyIndex(state.evals)],
    ]);
  }

  /** Open streams (subscriptions). */
  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Buffered batches, oldest first. */
  batches(): readonly EventBatch[] {
    return this.buffer;
  }

  subscribe(request: SubscribeRequest, sink: FrameSink): Subscription {
    const subscriber: Subscriber = { request, sink, waiting: [] };
    // Replay first (StartAtClosest): index 0 → everything buffered; else the first batch at or after the
    // index, or the newest one when the index is past it (Nomad's quirk).
    let start = 0;
    if (request.index !== 0 && this.buffer.length > 0) {
      const at = this.buffer.findIndex((b) => b.index >= request.index);
      start = at === -1 ? this.buffer.length - 1 : at;
    }
    this.subscribers.add(subscriber);
    for (const batch of this.buffer.slice(start)) this.deliver(subscriber, this.frames.of(batch));
    return { unsubscribe: () => this.subscribers.delete(subscriber), pump: () => pump(subscriber) };
  }

  private deliver(subscriber: Subscriber, frames: BatchFrames): void {
    if (!this.subscribers.has(subscriber)) return;
    const events = filterEvents(subscriber.request, frames.batch.events);
    if (events.length === 0) return;
    subscriber.waiting.push({ frames, events });
    pump(subscriber);
    if (subscriber.waiting.length > EVENT_BUFFER_SIZE) this.close(subscriber, "drop");
  }

  /** Ends a subscription: after what its stream holds (with `lastWords`), or at once ("drop"). */
  private close(subscriber: Subscriber, how?: string): void {
    this.subscribers.delete(subscriber);
    subscriber.waiting = [];
    if (how === "drop") subscriber.sink.drop();
    else subscriber.sink.close(how);
  }

  private note(type: string): void {
    if (!NOTE_TYPES.has(type)) return;
    const sink = this.ctx.store.undoSink();
    if (!sink) return; // not inside a write: it names no transaction
    this.notes.push(type);
    // A write that is rolled back takes its notes with it.
    const notes = this.notes;
    sink(() => {
      const at = notes.lastIndexOf(type);
      if (at !== -1) notes.splice(at, 1);
    });
  }

  private reset(): void {
    this.buffer.length = 0;
    this.notes = [];
    this.nodesSeen.clear();
    for (const node of this.state?.nodes.values() ?? []) this.nodesSeen.set(node.ID, node);
    this.rememberAcl();
    this.poolsSeen = rowsById<NodePoolRow>(this.ctx, NODE_POOLS_TABLE);
    this.servicesSeen = rowsById<ServiceRegistrationRow>(this.ctx, SERVICE_REGISTRATIONS_TABLE);
    for (const subscriber of [...this.subscribers]) this.close(subscriber);
  }

  private onCommit(commit: Commit): void {
    const notes = this.notes;
    this.notes = [];
    const state = this.state;
    if (!state) return;
    // A user's eval delete is a raft message Nomad maps to no event type (state/events.go): nothing is published.
    if (notes.includes("evals.deleted")) return;
    const events: StreamEvent[] = [];
    const nodes = commit.tables.has(TABLES.nodes) ? this.changedRows(TABLES.nodes, commit.index) : [];
    const nodeTypes = new Map(nodes.map((row) => [row.ID, nodeEventType(row, commit.index, this.nodesSeen)]));
    if (commit.tables.has(NODE_POOLS_TABLE)) {
      // A pool written with a node (fetchOrCreateNodePoolTxn) is part of the node's registration.
      const nodeType = nodes.length > 0 ? nodeTypes.get(nodes[0]!.ID) : undefined;
      events.push(...this.poolEvents(commit.index, nodeType));
    }
    // A node fault names the whole write (its evaluations and lost allocations too), as Nomad's node update does.
    const noted = notes.includes("node.updated") && nodes.length > 0 ? nodeTypes.get(nodes[0]!.ID) : undefined;
    for (const table of EVENT_TABLES) {
      if (!commit.tables.has(table)) continue;
      const rows = table === TABLES.nodes ? nodes : this.changedRows(table, commit.index);
      // Once per table: a write that migrates N allocations carries N notes, and asking them per row was O(N²).
      const tableType = table === TABLES.nodes ? undefined : eventType(notes, table);
      for (const row of rows) {
        const type = noted ?? tableType ?? nodeTypes.get(row.ID)!;
        events.push(toEvent(table, type, row, commit.index));
      }
    }
    for (const row of nodes) this.nodesSeen.set(row.ID, row as NodeRow);
    // A purged node's deregistration carries the node as it was (Nomad's NodeDeregistration).
    if (notes.includes("node.purged")) {
      for (const [id, row] of [...this.nodesSeen]) {
        if (state.nodes.get(id)) continue;
        events.push(toEvent(TABLES.nodes, "NodeDeregistration", row as unknown as Row, commit.index));
        this.nodesSeen.delete(id);
      }
    }
    // Collected nodes are forgotten without an event, so a later purge does not announce them.
    if (notes.includes("node.collected")) for (const id of [...this.nodesSeen.keys()]) if (!state.nodes.get(id)) this.nodesSeen.delete(id);
    if (commit.tables.has(SERVICE_REGISTRATIONS_TABLE)) events.push(...this.serviceEvents(commit.index));
    const aclChanged = commit.tables.has(ACL_TABLES.tokens) || commit.tables.has(ACL_TABLES.policies);
    if (aclChanged) {
      // Bootstrapping is its own raft message, which Nomad maps to no event.
      if (!commit.tables.has(ACL_TABLES.bootstrap)) events.push(...this.aclEvents(commit.index));
      this.rememberAcl();
      for (const subscriber of [...this.subscribers]) if (subscriber.request.stillAllowed?.() === false) this.close(subscriber, SUBSCRIPTION_CLOSED);
    }
    if (events.length === 0) return; // Publish drops empty batches
    const batch: EventBatch = { index: commit.index, events };
    this.buffer.push(batch);
    while (this.buffer.length > EVENT_BUFFER_SIZE) this.buffer.shift();
    const frames = this.frames.of(batch);
    for (const subscriber of [...this.subscribers]) this.deliver(subscriber, frames);
  }

  /** The rows of `table` the write at `index` left, in creation order (then ID). */
  private changedRows(table: string, index: number): Row[] {
    const rows = this.writtenAt.get(table)?.(String(index)) ?? [];
    brokerWork.rowsRead += rows.length;
    return rows.sort((a, b) => a.CreateIndex - b.CreateIndex || (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0));
  }

  /** ACLTokenUpserted / -Deleted and ACLPolicyUpserted / -Deleted for the rows a write changed (tokens without their secret). */
  private aclEvents(index: number): StreamEvent[] {
    const events: StreamEvent[] = [];
    const tokenEvent = (row: TokenRow, type: string): StreamEvent => ({
      Topic: "ACLToken",
      Type: type,
      Key: row.AccessorID,
      Namespace: "",
      FilterKeys: null,
      Index: index,
      payload: () => ({ ACLToken: tokenView({ ...row, SecretID: "" }) }),
    });
    const policyEvent = (row: PolicyRow, type: string): StreamEvent => ({
      Topic: "ACLPolicy",
      Type: type,
      Key: row.Name,
      Namespace: "",
      FilterKeys: null,
      Index: index,
      payload: () => ({ ACLPolicy: policyView(row) }),
    });
    const tokens = this.ctx.store.table<TokenRow>(ACL_TABLES.tokens);
    const policies = this.ctx.store.table<PolicyRow>(ACL_TABLES.policies);
    for (const row of tokens.sorted()) if (row.ModifyIndex === index) events.push(tokenEvent(row, "ACLTokenUpserted"));
    for (const [id, row] of this.aclSeen.tokens) if (!tokens.get(id)) events.push(tokenEvent(row, "ACLTokenDeleted"));
    for (const row of policies.sorted()) if (row.ModifyIndex === index) events.push(policyEvent(row, "ACLPolicyUpserted"));
    for (const [name, row] of this.aclSeen.policies) if (!policies.get(name)) events.push(policyEvent(row, "ACLPolicyDeleted"));
    return events;
  }

  /** NodePoolUpserted / NodePoolDeleted (or the node registration's type) for the pools this write changed. */
  private poolEvents(index: number, nodeType: string | undefined): StreamEvent[] {
    const pools = this.ctx.store.table<NodePoolRow>(NODE_POOLS_TABLE);
    const event = (row: NodePoolRow, type: string): StreamEvent => ({
      Topic: "NodePool",
      Type: nodeType ?? type,
      Key: row.Name,
      Namespace: "",
      FilterKeys: null,
      Index: index,
      payload: () => ({ NodePool: row }),
    });
    const events: StreamEvent[] = [];
    for (const row of pools.sorted()) if (row.ModifyIndex === index) events.push(event(row, "NodePoolUpserted"));
    for (const [name, row] of this.poolsSeen) if (!pools.get(name)) events.push(event(row, "NodePoolDeleted"));
    this.poolsSeen = rowsById<NodePoolRow>(this.ctx, NODE_POOLS_TABLE);
    return events;
  }

  /** ServiceRegistration / ServiceDeregistration for the registrations this write put or removed (Key: the ID; FilterKeys: job, service name). */
  private serviceEvents(index: number): StreamEvent[] {
    const registrations = this.ctx.store.table<ServiceRegistrationRow>(SERVICE_REGISTRATIONS_TABLE);
    const event = (row: ServiceRegistrationRow, type: string): StreamEvent => ({
      Topic: "Service",
      Type: type,
      Key: row.ID,
      Namespace: row.Namespace,
      FilterKeys: [row.JobID, row.ServiceName],
      Index: index,
      payload: () => ({ Service: row }),
    });
    // The rows this write put, from the store's by-ModifyIndex grouping; the rows it removed, from the
    // ones seen before — looked for only when the counts say some went, so a write costs what it changed.
    this.servicesWrittenAt ??= registrations.groupBy((row) => String(row.ModifyIndex));
    const written = this.servicesWrittenAt(String(index));
    brokerWork.rowsRead += written.length;
    const put = written.map((row) => [serviceKey(row), row] as const).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const added = put.filter(([key]) => !this.servicesSeen.has(key)).length;
    const removed: Array<[string, ServiceRegistrationRow]> = [];
    if (this.servicesSeen.size + added > registrations.size) {
      brokerWork.rowsRead += this.servicesSeen.size;
      for (const [key, row] of this.servicesSeen) if (!registrations.has(key)) removed.push([key, row]);
      removed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    }
    const events: StreamEvent[] = [];
    for (const [key, row] of removed) {
      events.push(event(row, "ServiceDeregistration"));
      this.servicesSeen.delete(key);
    }
    for (const [key, row] of put) {
      events.push(event(row, "ServiceRegistration"));
      this.servicesSeen.set(key, row);
    }
    return events;
  }

  private rememberAcl(): void {
    this.aclSeen.tokens = new Map(
      this.ctx.store
        .table<TokenRow>(ACL_TABLES.tokens)
        .sorted()
        .map((t) => [t.AccessorID, t]),
    );
    this.aclSeen.policies = new Map(
      this.ctx.store
        .table<PolicyRow>(ACL_TABLES.policies)
        .sorted()
        .map((p) => [p.Name, p]),
    );
  }
}

/** A registration's key in its table (service-registrations.ts). */
const serviceKey = (row: ServiceRegistrationRow) => `${row.Namespace}\u0000${row.ID}`;

/** A table's rows by their key in the table, in key order (so deletions come in that order). */
function rowsById<T extends Json>(ctx: ServiceContext, table: string): Map<string, T> {
  const rows = ctx.store.table<T>(table);
  return new Map([...rows.ids()].sort().map((id) => [id, rows.get(id)!]));
}

/** Hands waiting batches to the stream while it has room (each as the line encoded once for every subscriber taking it). */
function pump(subscriber: Subscriber): void {
  const { waiting, sink } = subscriber;
  let taken = 0;
  while (taken < waiting.length && sink.hasRoom()) {
    const { frames, events } = waiting[taken++]!;
    sink.write(frames.lineFor(events));
  }
  if (taken > 0) waiting.splice(0, taken);
}
