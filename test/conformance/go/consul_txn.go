package main

import (
	"fmt"
	"time"

	consul "github.com/hashicorp/consul/api"
)

// consulTxnChecks: transactions (Txn) and user events (Event) through the
// official Go client.
func consulTxnChecks(control Control) []Check {
	c := consulClient()
	kv := c.KV()
	return []Check{
		{"consul-txn/kv-set-cas-check-index", func() error {
			if _, err := kv.Put(&consul.KVPair{Key: "txn/a", Value: []byte("one")}, nil); err != nil {
				return err
			}
			pair, _, err := kv.Get("txn/a", nil)
			if err := First(err, Expect(pair != nil, "txn/a missing")); err != nil {
				return err
			}
			ops := consul.TxnOps{
				{KV: &consul.KVTxnOp{Verb: consul.KVCheckIndex, Key: "txn/a", Index: pair.ModifyIndex}},
				{KV: &consul.KVTxnOp{Verb: consul.KVCAS, Key: "txn/a", Value: []byte("two"), Index: pair.ModifyIndex}},
				{KV: &consul.KVTxnOp{Verb: consul.KVSet, Key: "txn/b", Value: []byte("b"), Flags: 0xe0f69a2baa414de0}},
				{KV: &consul.KVTxnOp{Verb: consul.KVGet, Key: "txn/b"}},
			}
			ok, resp, _, err := c.Txn().Txn(ops, nil)
			if err != nil {
				return err
			}
			if err := Expect(ok && len(resp.Errors) == 0 && len(resp.Results) == 4, "txn: ok=%v errors=%+v results=%d", ok, resp.Errors, len(resp.Results)); err != nil {
				return err
			}
			got := resp.Results[3].KV
			if err := Expect(got != nil && string(got.Value) == "b" && got.Flags == 0xe0f69a2baa414de0, "get result: %+v", got); err != nil {
				return err
			}
			after, _, err := kv.Get("txn/a", nil)
			return First(err, Expect(after != nil && string(after.Value) == "two", "txn/a after cas: %+v", after))
		}},
		{"consul-txn/failing-transaction-changes-nothing", func() error {
			ops := consul.TxnOps{
				{KV: &consul.KVTxnOp{Verb: consul.KVSet, Key: "txn/never", Value: []byte("x")}},
				{KV: &consul.KVTxnOp{Verb: consul.KVCAS, Key: "txn/a", Value: []byte("stale"), Index: 1}},
				{KV: &consul.KVTxnOp{Verb: consul.KVCheckNotExists, Key: "txn/a"}},
			}
			ok, resp, _, err := c.Txn().Txn(ops, nil)
			if err != nil {
				return err
			}
			if err := Expect(!ok && resp != nil && resp.Results == nil && len(resp.Errors) == 2, "txn: ok=%v resp=%+v", ok, resp); err != nil {
				return err
			}
			if err := Expect(resp.Errors[0].OpIndex == 1 && resp.Errors[0].What == `failed to set key "txn/a", index is stale` && resp.Errors[1].OpIndex == 2,
				"errors: %+v %+v", resp.Errors[0], resp.Errors[1]); err != nil {
				return err
			}
			never, _, err := kv.Get("txn/never", nil)
			return First(err, Expect(never == nil, "txn/never was written: %+v", never))
		}},
		{"consul-txn/node-and-service-set", func() error {
			ops := consul.TxnOps{
				{Node: &consul.NodeTxnOp{Verb: consul.NodeSet, Node: consul.Node{Node: "txn-node", Address: "10.1.2.3"}}},
				{Service: &consul.ServiceTxnOp{Verb: consul.ServiceSet, Node: "txn-node", Service: consul.AgentService{ID: "web-1", Service: "web", Port: 8080, Tags: []string{"v1"}}}},
				{Check: &consul.CheckTxnOp{Verb: consul.CheckSet, Check: consul.HealthCheck{Node: "txn-node", CheckID: "web-1-alive", Name: "alive", ServiceID: "web-1", Status: consul.HealthPassing}}},
			}
			ok, resp, _, err := c.Txn().Txn(ops, nil)
			if err != nil {
				return err
			}
			if err := Expect(ok && len(resp.Results) == 3, "txn: ok=%v errors=%+v", ok, resp.Errors); err != nil {
				return err
			}
			node, svc, check := resp.Results[0].Node, resp.Results[1].Service, resp.Results[2].Check
			if err := Expect(node != nil && node.Node == "txn-node" && node.Datacenter == "dc1", "node: %+v", node); err != nil {
				return err
			}
			if err := Expect(svc != nil && svc.ID == "web-1" && svc.Service == "web" && svc.Port == 8080 && len(svc.Tags) == 1, "service: %+v", svc); err != nil {
				return err
			}
			if err := Expect(check != nil && check.ServiceName == "web" && check.Status == consul.HealthPassing, "check: %+v", check); err != nil {
				return err
			}
			read := consul.TxnOps{{Service: &consul.ServiceTxnOp{Verb: consul.ServiceGet, Node: "txn-node", Service: consul.AgentService{ID: "web-1"}}}}
			ok, resp, meta, err := c.Txn().Txn(read, nil)
			if err != nil {
				return err
			}
			return Expect(ok && meta.KnownLeader && len(resp.Results) == 1 && resp.Results[0].Service.CreateIndex == svc.CreateIndex, "read: ok=%v meta=%+v resp=%+v", ok, meta, resp)
		}},
		{"consul-txn/event-fire-list-blocking", func() error {
			id, _, err := c.Event().Fire(&consul.UserEvent{Name: "deploy", Payload: []byte("v1")}, nil)
			if err != nil {
				return err
			}
			events, meta, err := c.Event().List("deploy", nil)
			if err != nil {
				return err
			}
			if err := Expect(len(events) == 1 && events[0].ID == id && string(events[0].Payload) == "v1" && meta.LastIndex == c.Event().IDToIndex(id),
				"list: %+v index %d", events, meta.LastIndex); err != nil {
				return err
			}
			type listed struct {
				events []*consul.UserEvent
				meta   *consul.QueryMeta
				err    error
			}
			done := make(chan listed, 1)
			go func() {
				events, meta, err := c.Event().List("deploy", &consul.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 5 * time.Minute})
				done <- listed{events, meta, err}
			}()
			second, _, err := c.Event().Fire(&consul.UserEvent{Name: "deploy", Payload: []byte("v2")}, nil)
			if err != nil {
				return err
			}
			select {
			case got := <-done:
				if got.err != nil {
					return got.err
				}
				return Expect(len(got.events) == 2 && got.events[1].ID == second && got.meta.LastIndex == c.Event().IDToIndex(second), "woken list: %+v", got.events)
			case <-time.After(60 * time.Second):
				return fmt.Errorf("the blocking list did not wake on a new event")
			}
		}},
	}
}
