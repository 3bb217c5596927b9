/**
 * One event of Nomad's event stream as a row's change becomes it
 * (nomad/state/events.go): its type, from what the write noted, its topic,
 * keys and payload, the subscription's filter (nomad/stream/subscription.go)
 * and a batch's NDJSON frame. The broker (events.ts) calls these for every
 * committed write.
 */
import { encodeJSON } from "../../core/json.js";
import { allocWire, deploymentView, evalWire, jobView, TABLES, type Json, type NodeRow } from "../state/model.js";
import { nodeView } from "../nodes/node-view.js";

/**
 * The broker's work (all brokers of the process together): rows read to turn
 * writes into events, event types looked up, and lines (frames) encoded with
 * their bytes — a test's way to pin that a write costs what it changed, not
 * what the state holds, and is encoded once however many streams take it,
 * without timing anything.
 */
export const brokerWork = { rowsRead: 0, typeLookups: 0, linesEncoded: 0, bytesEncoded: 0 };

export interface StreamEvent {
  readonly Topic: string;
  readonly Type: string;
  readonly Key: string;
  readonly Namespace: string;
  readonly FilterKeys: readonly string[] | null;
  readonly Index: number;
  /** Rendered when encoded (rows are frozen, so the event keeps the row as it was). */
  readonly payload: () => Json;
}

export interface EventBatch {
  readonly index: number;
  readonly events: readonly StreamEvent[];
}

export interface SubscribeRequest {
  /** Topic → keys, as parseEventTopics builds it (`*` → [`*`] when no topic is given). */
  readonly topics: ReadonlyMap<string, readonly string[]>;
  readonly namespace: string;
  /** 0 = from the oldest buffered batch; otherwise the first batch at or after it (or the newest). */
  readonly index: number;
  /**
   * Asked again after every ACL change: a stream whose token was deleted, or
   * whose policies no longer allow its topics, is closed (Nomad's broker
   * re-checks its subscriptions on ACL token and policy updates).
   */
  readonly stillAllowed?: () => boolean;
}

export type Row = Json & { ID: string; CreateIndex: number; ModifyIndex: number };

/**
 * The event type: Nomad's name for the transaction's message type
 * (state/events.go MsgTypeEvents), from what the write noted; the table's
 * usual one when it noted nothing.
 */
export function eventType(notes: readonly string[], table: string): string {
  brokerWork.typeLookups++;
  const has = (...types: string[]) => types.some((t) => notes.includes(t));
  if (has("job.stopped", "job.purged")) return "JobDeregistered";
  // An allocation stop (Alloc.Stop's desired-transition update and its eval): one transaction in Nomad.
  if (has("alloc.desired-transition")) return "AllocationUpdateDesiredStatus";
  if (has("job.registered", "job.periodic-launch")) return "JobRegistered";
  if (has("deployment.promoted")) return "DeploymentPromotion";
  // A health report's transaction carries the allocations, the deployment (failed when one is unhealthy) and its eval.
  if (has("deployment.alloc-health")) return "DeploymentAllocHealth";
  // The scheduler's plan (allocations, deployment, job status) then its eval update, which Nomad commits apart.
  if (has("eval.complete")) return table === TABLES.evals ? "EvaluationUpdated" : "PlanResult";
  if (has("deployment.successful", "deployment.failed", "deployment.cancelled")) return "DeploymentStatusUpdate";
  if (has("alloc.transition")) return "AllocationUpdated";
  switch (table) {
    case TABLES.jobs:
      return "JobRegistered";
    case TABLES.evals:
      return "EvaluationUpdated";
    case TABLES.allocs:
      return "AllocationUpdated";
    default:
      return "DeploymentStatusUpdate";
  }
}

/**
 * A node's event: NodeRegistration when it is new, NodeDrain when only its
 * eligibility or drain changed (Nomad names both of those updates NodeDrain),
 * else NodeStreamEvent (a status update; Nomad's TypeNodeEvent).
 */
export function nodeEventType(row: Row, index: number, nodesSeen: ReadonlyMap<string, NodeRow>): string {
  if (row.CreateIndex === index) return "NodeRegistration";
  const before = nodesSeen.get(row.ID);
  if (before && before.Status === row.Status && (before.SchedulingEligibility !== row.SchedulingEligibility || before.Drain !== row.Drain)) return "NodeDrain";
  return "NodeStreamEvent";
}

export function toEvent(table: string, type: string, row: Row, index: number): StreamEvent {
  const ns = String(row.Namespace ?? "");
  switch (table) {
    case TABLES.jobs:
      return { Topic: "Job", Type: type, Key: row.ID, Namespace: ns, FilterKeys: null, Index: index, payload: () => ({ Job: jobView(row as never) }) };
    case TABLES.evals:
      return {
        Topic: "Evaluation",
        Type: type,
        Key: row.ID,
        Namespace: ns,
        FilterKeys: [String(row.JobID ?? ""), String(row.DeploymentID ?? "")],
        Index: index,
        payload: () => ({ Evaluation: evalWire(row as never) }),
      };
    case TABLES.allocs:
      return {
        Topic: "Allocation",
        Type: type,
        Key: row.ID,
        Namespace: ns,
        FilterKeys: [String(row.JobID ?? ""), String(row.DeploymentID ?? "")],
        Index: index,
        // The embedded job is removed to keep the event small.
        payload: () => ({ Allocation: allocWire(row as never, undefined) }),
      };
    case TABLES.deployments:
      return {
        Topic: "Deployment",
        Type: type,
        Key: row.ID,
        Namespace: ns,
        FilterKeys: [String(row.JobID ?? "")],
        Index: index,
        payload: () => ({ Deployment: deploymentView(row as never) }),
      };
    default:
      // Nodes are not namespaced: Namespace "" passes every namespace filter.
      return { Topic: "Node", Type: type, Key: row.ID, Namespace: "", FilterKeys: null, Index: index, payload: () => ({ Node: nodeView(row as never) }) };
  }
}

/** nomad/stream/subscription.go `filter`, quirks included (a key matching twice yields the event twice). */
export function filterEvents(request: SubscribeRequest, events: readonly StreamEvent[]): StreamEvent[] {
  if (events.length === 0) return [];
  const allTopicKeys = request.topics.get("*") ?? [];
  const allAll = allTopicKeys.length === 1 && allTopicKeys[0] === "*";
  if (request.namespace === "*" && allAll) return [...events];
  const result: StreamEvent[] = [];
  for (const event of events) {
    if (request.namespace !== "*" && event.Namespace !== "" && event.Namespace !== request.namespace) continue;
    if (allAll) {
      result.push(event);
      continue;
    }
    const keys = [...allTopicKeys, ...(request.topics.get(event.Topic) ?? [])];
    if (keys.length === 1 && keys[0] === "*") {
      result.push(event);
      continue;
    }
    for (const key of keys) if (event.Key === key || (event.FilterKeys ?? []).includes(key)) result.push(event);
  }
  return result;
}

/** The frame for a batch: `{"Events":[…],"Index":N}` with fields sorted, as Nomad's encoder writes it. */
export function encodeBatch(batch: EventBatch): string {
  const events = batch.events.map((e) => ({ Topic: e.Topic, Type: e.Type, Key: e.Key, Namespace: e.Namespace, FilterKeys: e.FilterKeys, Index: e.Index, Payload: e.payload() }));
  return encodeJSON({ Index: batch.index, Events: events }, { sortKeys: true });
}
