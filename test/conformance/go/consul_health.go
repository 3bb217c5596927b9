package main

import (
	"fmt"
	"time"

	consul "github.com/hashicorp/consul/api"
)

// consulHealthChecks drives the catalog and health service reads with the
// official Go client: services registered through Catalog().Register, a
// passing-only Health().Service that loses an instance when its check goes
// critical (set through standin's control API), and blocking queries
// (WaitIndex) woken by the change they wait for.
func consulHealthChecks(control Control) []Check {
	c := consulClient()
	registerWeb := func(n int, port int) error {
		_, err := c.Catalog().Register(&consul.CatalogRegistration{
			Node:    fmt.Sprintf("go-node-%d", n),
			Address: fmt.Sprintf("10.8.0.%d", n),
			Service: &consul.AgentService{ID: fmt.Sprintf("go-web-%d", n), Service: "go-web", Tags: []string{"v1"}, Port: port},
			Check:   &consul.AgentCheck{CheckID: fmt.Sprintf("go-web-%d-ttl", n), ServiceID: fmt.Sprintf("go-web-%d", n), Name: "ttl", Status: consul.HealthPassing},
		}, nil)
		return err
	}
	ids := func(entries []*consul.ServiceEntry) []string {
		out := []string{}
		for _, e := range entries {
			out = append(out, e.Service.ID)
		}
		return out
	}
	return []Check{
		{"consul-health/catalog-service-and-services", func() error {
			for n := 1; n <= 2; n++ {
				if err := registerWeb(n, 8080+n); err != nil {
					return err
				}
			}
			services, _, err := c.Catalog().Services(nil)
			if err := First(err, Expect(len(services["go-web"]) == 1 && services["go-web"][0] == "v1", "services: %v", services)); err != nil {
				return err
			}
			instances, meta, err := c.Catalog().Service("go-web", "V1", nil)
			if err != nil {
				return err
			}
			if err := Expect(len(instances) == 2 && instances[0].ServiceID == "go-web-1" && instances[0].ServicePort == 8081 && instances[1].Node == "go-node-2" &&
				instances[0].ServiceWeights.Passing == 1 && instances[0].Address == "10.8.0.1", "instances: %+v", instances); err != nil {
				return err
			}
			return Expect(meta.LastIndex > 0 && meta.KnownLeader, "meta: %+v", meta)
		}},
		{"consul-health/passing-only-drops-critical-instance", func() error {
			entries, _, err := c.Health().Service("go-web", "", true, nil)
			if err := First(err, Expect(len(entries) == 2, "passing before: %v", ids(entries))); err != nil {
				return err
			}
			// A node registered through the catalog has no node checks of its own: only the instance's check.
			if err := Expect(len(entries[0].Checks) == 1 && entries[0].Checks[0].CheckID == "go-web-1-ttl" && entries[0].Node.Node == "go-node-1", "entry: %+v", entries[0]); err != nil {
				return err
			}
			if _, err := control.Post("/_standin/registry/checks", map[string]string{"Node": "go-node-2", "CheckID": "go-web-2-ttl", "Status": "critical"}); err != nil {
				return err
			}
			after, _, err := c.Health().Service("go-web", "", true, nil)
			if err := First(err, Expect(len(after) == 1 && after[0].Service.ID == "go-web-1", "passing after: %v", ids(after))); err != nil {
				return err
			}
			all, _, err := c.Health().Service("go-web", "", false, nil)
			return First(err, Expect(len(all) == 2 && all[1].Checks.AggregatedStatus() == consul.HealthCritical, "all: %v", ids(all)))
		}},
		{"consul-health/blocking-service-woken-by-check", func() error {
			_, meta, err := c.Health().Service("go-web", "", true, nil)
			if err != nil {
				return err
			}
			type result struct {
				entries []*consul.ServiceEntry
				meta    *consul.QueryMeta
				err     error
			}
			done := make(chan result, 1)
			go func() {
				entries, m, err := c.Health().Service("go-web", "", true, &consul.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: time.Minute})
				done <- result{entries, m, err}
			}()
			// An unrelated write must not answer it: a KV put, then the wanted change.
			time.Sleep(200 * time.Millisecond)
			if _, err := c.KV().Put(&consul.KVPair{Key: "conformance/health/noise", Value: []byte("x")}, nil); err != nil {
				return err
			}
			select {
			case r := <-done:
				return fmt.Errorf("blocking query answered by a KV write: %v %v", ids(r.entries), r.err)
			case <-time.After(300 * time.Millisecond):
			}
			if _, err := control.Post("/_standin/registry/checks", map[string]string{"Node": "go-node-2", "CheckID": "go-web-2-ttl", "Status": "passing"}); err != nil {
				return err
			}
			select {
			case r := <-done:
				return First(r.err, Expect(len(r.entries) == 2 && r.meta.LastIndex > meta.LastIndex, "woken: %v index %d", ids(r.entries), r.meta.LastIndex))
			case <-time.After(60 * time.Second):
				return fmt.Errorf("blocking health query not woken by the check change")
			}
		}},
		{"consul-health/blocking-catalog-services-woken-by-register", func() error {
			_, meta, err := c.Catalog().Services(nil)
			if err != nil {
				return err
			}
			done := make(chan error, 1)
			go func() {
				services, m, err := c.Catalog().Services(&consul.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: time.Minute})
				done <- First(err, Expect(len(services["go-api"]) == 0 && services["go-api"] != nil && m.LastIndex > meta.LastIndex, "services: %v", services))
			}()
			time.Sleep(200 * time.Millisecond)
			if _, err := c.Catalog().Register(&consul.CatalogRegistration{Node: "go-node-1", Address: "10.8.0.1", Service: &consul.AgentService{Service: "go-api"}}, nil); err != nil {
				return err
			}
			select {
			case err := <-done:
				return err
			case <-time.After(60 * time.Second):
				return fmt.Errorf("blocking catalog services query not woken by a registration")
			}
		}},
		{"consul-health/deregister-service", func() error {
			if _, err := c.Catalog().Deregister(&consul.CatalogDeregistration{Node: "go-node-2", ServiceID: "go-web-2"}, nil); err != nil {
				return err
			}
			instances, _, err := c.Catalog().Service("go-web", "", nil)
			if err := First(err, Expect(len(instances) == 1 && instances[0].ServiceID == "go-web-1", "instances: %+v", instances)); err != nil {
				return err
			}
			node, _, err := c.Catalog().Node("go-node-2", nil)
			return First(err, Expect(node != nil && len(node.Services) == 0, "node: %+v", node))
		}},
		{"consul-health/catalog-nodes-node-meta", func() error {
			for n, rack := range []string{"r1", "r2", "r1"} {
				if _, err := c.Catalog().Register(&consul.CatalogRegistration{Node: fmt.Sprintf("go-meta-%d", n), Address: fmt.Sprintf("10.9.0.%d", n), NodeMeta: map[string]string{"rack": rack, "pool": "meta"}}, nil); err != nil {
					return err
				}
			}
			names := func(nodes []*consul.Node) []string {
				out := []string{}
				for _, n := range nodes {
					out = append(out, n.Node)
				}
				return out
			}
			r1, _, err := c.Catalog().Nodes(&consul.QueryOptions{NodeMeta: map[string]string{"rack": "r1"}})
			if err := First(err, Expect(len(r1) == 2 && r1[0].Node == "go-meta-0" && r1[1].Node == "go-meta-2", "rack r1: %v", names(r1))); err != nil {
				return err
			}
			both, _, err := c.Catalog().Nodes(&consul.QueryOptions{NodeMeta: map[string]string{"rack": "r2", "pool": "meta"}})
			if err := First(err, Expect(len(both) == 1 && both[0].Node == "go-meta-1", "rack r2 and pool meta: %v", names(both))); err != nil {
				return err
			}
			none, _, err := c.Catalog().Nodes(&consul.QueryOptions{NodeMeta: map[string]string{"rack": "r3"}})
			return First(err, Expect(len(none) == 0, "rack r3: %v", names(none)))
		}},
		{"consul-health/server-node-and-consul-service", func() error {
			// What every real cluster lists: the server's own consul service, on a node with the agent's
			// tagged addresses and meta, which services registered through the agent share.
			services, _, err := c.Catalog().Services(nil)
			if err := First(err, Expect(services["consul"] != nil && len(services["consul"]) == 0, "services: %v", services)); err != nil {
				return err
			}
			servers, _, err := c.Catalog().Service("consul", "", nil)
			if err != nil {
				return err
			}
			if err := Expect(len(servers) == 1 && servers[0].ServiceID == "consul" && servers[0].ServicePort == 8300 && servers[0].Node == "standin" &&
				servers[0].ServiceMeta["raft_version"] == "3" && servers[0].ServiceMeta["version"] != "", "consul service: %+v", servers); err != nil {
				return err
			}
			if err := c.Agent().ServiceRegister(&consul.AgentServiceRegistration{ID: "go-agent-web", Name: "go-agent-web", Port: 9090}); err != nil {
				return err
			}
			entries, _, err := c.Health().Service("go-agent-web", "", false, nil)
			if err := First(err, Expect(len(entries) == 1, "entries: %d", len(entries))); err != nil {
				return err
			}
			node := entries[0].Node
			for _, key := range []string{"lan", "lan_ipv4", "wan", "wan_ipv4"} {
				if node.TaggedAddresses[key] != node.Address || node.Address == "" {
					return fmt.Errorf("tagged address %q: %q (node address %q)", key, node.TaggedAddresses[key], node.Address)
				}
			}
			if v, ok := node.Meta["consul-network-segment"]; !ok || v != "" || node.Meta["consul-version"] == "" {
				return fmt.Errorf("node meta: %v", node.Meta)
			}
			local, err := c.Agent().Services()
			if err := First(err, Expect(local["consul"] == nil && local["go-agent-web"] != nil, "agent services: %v", local)); err != nil {
				return err
			}
			return c.Agent().ServiceDeregister("go-agent-web")
		}},
		{"consul-health/parked-query-answered-by-reset", func() error {
			// Last: it resets the state. A blocking query parked at the old index answers at once with
			// the start state and its lower index (a consul/api watch resets its index then).
			_, meta, err := c.Catalog().Services(nil)
			if err != nil {
				return err
			}
			type result struct {
				services map[string][]string
				meta     *consul.QueryMeta
				err      error
			}
			done := make(chan result, 1)
			go func() {
				services, m, err := c.Catalog().Services(&consul.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 5 * time.Minute})
				done <- result{services, m, err}
			}()
			time.Sleep(200 * time.Millisecond)
			if _, err := control.Post("/_standin/reset", map[string]string{}); err != nil {
				return err
			}
			select {
			case r := <-done:
				if r.err != nil {
					return r.err
				}
				return Expect(r.meta.LastIndex < meta.LastIndex && r.services["go-web"] == nil && r.services["consul"] != nil, "after reset: index %d (was %d), services %v", r.meta.LastIndex, meta.LastIndex, r.services)
			case <-time.After(60 * time.Second):
				return fmt.Errorf("the parked query was not answered by the reset")
			}
		}},
	}
}
