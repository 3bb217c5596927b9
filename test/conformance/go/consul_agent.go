package main

import (
	"fmt"
	"strings"
	"time"

	consul "github.com/hashicorp/consul/api"
)

// consulAgentChecks: the agent's services and checks through the official Go
// client — a service with a TTL check, TTL updates, the TTL lapsing on the
// virtual clock (moved through the control API) and the session bound to
// the check going with it; hash blocking on one service; local health;
// maintenance; deregistration.
func consulAgentChecks(control Control) []Check {
	c := consulClient()
	agent := c.Agent()
	return []Check{
		{"consul-agent/service-register-with-ttl-check", func() error {
			err := agent.ServiceRegister(&consul.AgentServiceRegistration{
				ID: "web-1", Name: "web", Tags: []string{"v1"}, Port: 8080, Address: "10.0.0.5",
				Check: &consul.AgentServiceCheck{CheckID: "web-ttl", TTL: "10s"},
			})
			if err != nil {
				return err
			}
			services, err := agent.Services()
			if err != nil {
				return err
			}
			web := services["web-1"]
			if err := Expect(web != nil && web.Service == "web" && web.Port == 8080 && web.Weights.Passing == 1 && web.TaggedAddresses["lan_ipv4"].Address == "10.0.0.5" && web.Datacenter == "dc1", "services: %+v", services); err != nil {
				return err
			}
			checks, err := agent.Checks()
			if err != nil {
				return err
			}
			check := checks["web-ttl"]
			return Expect(check != nil && check.Status == "critical" && check.ServiceID == "web-1" && check.ServiceName == "web" && check.Type == "ttl" && check.Name == "Service 'web' check", "checks: %+v", checks)
		}},
		{"consul-agent/update-ttl-then-lapse-invalidates-session", func() error {
			if err := agent.UpdateTTL("web-ttl", "ready", consul.HealthPassing); err != nil {
				return err
			}
			id, _, err := c.Session().Create(&consul.SessionEntry{Name: "bound", ServiceChecks: []consul.ServiceCheck{{ID: "web-ttl"}}, NodeChecks: []string{"serfHealth"}}, nil)
			if err != nil {
				return err
			}
			if err := control.Advance("9s"); err != nil {
				return err
			}
			if err := agent.UpdateTTL("web-ttl", "still ready", "pass"); err != nil {
				return err
			}
			if err := control.Advance("9s"); err != nil {
				return err
			}
			status, _, err := agent.AgentHealthServiceByID("web-1")
			if err := First(err, Expect(status == consul.HealthPassing, "health before the TTL lapses: %q", status)); err != nil {
				return err
			}
			alive, _, err := c.Session().Info(id, nil)
			if err := First(err, Expect(alive != nil, "session gone while its check passes")); err != nil {
				return err
			}
			if err := control.Advance("2s"); err != nil {
				return err
			}
			checks, err := agent.Checks()
			if err != nil {
				return err
			}
			lapsed := checks["web-ttl"]
			if err := Expect(lapsed != nil && lapsed.Status == "critical" && lapsed.Output == "TTL expired (last output before timeout follows): still ready", "after the TTL: %+v", lapsed); err != nil {
				return err
			}
			status, info, err := agent.AgentHealthServiceByID("web-1")
			if err := First(err, Expect(status == consul.HealthCritical && info != nil && info.AggregatedStatus == consul.HealthCritical, "health after the TTL: %q %+v", status, info)); err != nil {
				return err
			}
			gone, _, err := c.Session().Info(id, nil)
			return First(err, Expect(gone == nil, "session alive after its check went critical: %+v", gone))
		}},
		{"consul-agent/service-hash-blocking", func() error {
			svc, _, err := agent.Service("web-1", nil)
			if err != nil {
				return err
			}
			if err := Expect(svc.ContentHash != "", "no ContentHash: %+v", svc); err != nil {
				return err
			}
			done := make(chan *consul.AgentService, 1)
			errs := make(chan error, 1)
			go func() {
				changed, _, err := agent.Service("web-1", &consul.QueryOptions{WaitHash: svc.ContentHash, WaitTime: 5 * time.Minute})
				if err != nil {
					errs <- err
					return
				}
				done <- changed
			}()
			// Time for the query to park; were it not parked yet, the changed hash would answer it at once just the same.
			time.Sleep(200 * time.Millisecond)
			if err := agent.ServiceRegister(&consul.AgentServiceRegistration{ID: "web-1", Name: "web", Port: 9090, Check: &consul.AgentServiceCheck{CheckID: "web-ttl", TTL: "10s"}}); err != nil {
				return err
			}
			select {
			case changed := <-done:
				return Expect(changed.Port == 9090 && changed.ContentHash != svc.ContentHash, "woken with %+v", changed)
			case err := <-errs:
				return err
			case <-time.After(60 * time.Second):
				return fmt.Errorf("hash-blocking query not woken by the change")
			}
		}},
		{"consul-agent/check-register-and-maintenance", func() error {
			err := agent.CheckRegister(&consul.AgentCheckRegistration{Name: "disk", AgentServiceCheck: consul.AgentServiceCheck{TTL: "30s", Status: consul.HealthPassing}})
			if err != nil {
				return err
			}
			if err := agent.WarnTTL("disk", "80% full"); err != nil {
				return err
			}
			checks, err := agent.Checks()
			if err := First(err, Expect(checks["disk"] != nil && checks["disk"].Status == "warning" && checks["disk"].Output == "80% full", "disk: %+v", checks["disk"])); err != nil {
				return err
			}
			if err := agent.EnableServiceMaintenance("web-1", "deploying"); err != nil {
				return err
			}
			// The client maps the 503 to "critical"; the body says why.
			status, infos, err := agent.AgentHealthServiceByName("web")
			if err := First(err, Expect(status == consul.HealthCritical && len(infos) == 1 && infos[0].AggregatedStatus == consul.HealthMaint, "health in maintenance: %q %+v", status, infos)); err != nil {
				return err
			}
			if err := agent.DisableServiceMaintenance("web-1"); err != nil {
				return err
			}
			return agent.CheckDeregister("disk")
		}},
		{"consul-agent/service-deregister", func() error {
			if err := agent.ServiceDeregister("web-1"); err != nil {
				return err
			}
			services, err := agent.Services()
			if err := First(err, Expect(len(services) == 0, "services left: %+v", services)); err != nil {
				return err
			}
			err = agent.ServiceDeregister("web-1")
			return Expect(err != nil && strings.Contains(err.Error(), "404"), "deregistering an unknown service: %v", err)
		}},
	}
}
