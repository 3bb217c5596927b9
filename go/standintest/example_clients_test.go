//go:build clients

package standintest_test

import (
	"testing"
	"time"

	consul "github.com/hashicorp/consul/api"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/standin-dev/standin/go/standintest"
)

// A job deploys and a session expires, on the virtual clock: no sleeping.
func TestDeployAndSessionExpiry(t *testing.T) {
	srv := standintest.Start(t, standintest.WithSeed(7))
	srv.SetEnv(t) // NOMAD_ADDR, CONSUL_HTTP_ADDR, … for the clients' DefaultConfig

	nomadClient, err := nomad.NewClient(nomad.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	task := nomad.NewTask("server", "docker").SetConfig("image", "nginx:1.25")
	job := nomad.NewServiceJob("web", "web", "global", 50).AddDatacenter("dc1").
		AddTaskGroup(nomad.NewTaskGroup("web", 2).AddTask(task))
	if _, _, err := nomadClient.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	// Moves the clock timer by timer until the deployment has succeeded (at most 10 virtual minutes).
	srv.Await(standintest.Until{"deployment": {"job": "web", "status": "successful"}}, 10*time.Minute)
	allocs, _, err := nomadClient.Jobs().Allocations("web", false, nil)
	if err != nil || len(allocs) != 2 || allocs[0].ClientStatus != "running" {
		t.Fatalf("allocations: %d, %v", len(allocs), err)
	}

	consulClient, err := consul.NewClient(consul.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := consulClient.Session().Create(&consul.SessionEntry{TTL: "10s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Advance(21 * time.Second) // Consul keeps a session up to twice its TTL
	if session, _, err := consulClient.Session().Info(id, nil); err != nil || session != nil {
		t.Fatalf("the session outlived its TTL: %+v, %v", session, err)
	}
}
