//go:build clients

package standintest_test

import (
	"testing"
	"time"

	consul "github.com/hashicorp/consul/api"
	nomad "github.com/hashicorp/nomad/api"
	"github.com/standin-dev/standin/go/standintest"
)

// The official clients against a standin the helper started. Built only with
// -tags clients (GOPATH mode, with ../shared/go-clients): the module itself
// depends on nothing.

func consulFor(t *testing.T, srv *standintest.Server) *consul.Client {
	t.Helper()
	config := consul.DefaultConfig()
	config.Address = srv.ConsulAddr
	if srv.CACert != "" {
		config.TLSConfig.CAFile = srv.CACert
	}
	client, err := consul.NewClient(config)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func TestSessionExpiresWhenTheTestAdvancesTheClock(t *testing.T) {
	srv := standintest.Start(t)
	sessions := consulFor(t, srv).Session()
	id, _, err := sessions.Create(&consul.SessionEntry{TTL: "10s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Advance(19 * time.Second)
	if alive, _, err := sessions.Info(id, nil); err != nil || alive == nil {
		t.Fatalf("the session is gone before twice its TTL: %v", err)
	}
	moved := srv.Advance(2 * time.Second)
	if gone, _, err := sessions.Info(id, nil); err != nil || gone != nil {
		t.Fatalf("the session outlived twice its TTL: %+v, %v", gone, err)
	}
	if len(moved.Fired) == 0 {
		t.Fatalf("no timer fired for the expiry: %+v", moved)
	}
}

func TestJobDeploys(t *testing.T) {
	srv := standintest.Start(t)
	srv.SetEnv(t)
	client, err := nomad.NewClient(nomad.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	task := nomad.NewTask("server", "docker").SetConfig("image", "nginx:1.25")
	group := nomad.NewTaskGroup("web", 3).AddTask(task)
	job := nomad.NewServiceJob("web", "web", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
	resp, _, err := client.Jobs().Register(job, nil)
	if err != nil || resp.EvalID == "" {
		t.Fatalf("register: %+v %v", resp, err)
	}
	awaited := srv.Await(standintest.Until{"deployment": {"job": "web", "status": "successful"}}, 10*time.Minute)
	if !awaited.Met || !awaited.Now.After(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("await: %+v", awaited)
	}
	deployment, _, err := client.Jobs().LatestDeployment("web", nil)
	if err != nil || deployment == nil || deployment.Status != "successful" {
		t.Fatalf("deployment: %+v %v", deployment, err)
	}
	allocs, _, err := client.Jobs().Allocations("web", false, nil)
	running := 0
	for _, alloc := range allocs {
		if alloc.ClientStatus == "running" {
			running++
		}
	}
	if err != nil || running != 3 {
		t.Fatalf("running allocations: %d of %d, %v", running, len(allocs), err)
	}
}

func TestLockHandedOver(t *testing.T) {
	srv := standintest.Start(t)
	client := consulFor(t, srv)
	const key = "service/leader"
	// B's session outlives the clock jump that expires A's: a real client renews every
	// TTL/2 of real time, which a jump of virtual time does not wait for.
	a, err := client.LockOpts(&consul.LockOptions{Key: key, SessionTTL: "10s"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.LockOpts(&consul.LockOptions{Key: key, SessionTTL: "120s"})
	if err != nil {
		t.Fatal(err)
	}
	lostA, err := a.Lock(nil)
	if err != nil || lostA == nil {
		t.Fatalf("A did not get the lock: %v", err)
	}
	bLeads := make(chan (<-chan struct{}), 1)
	bFailed := make(chan error, 1)
	go func() {
		ch, err := b.Lock(nil)
		if err != nil {
			bFailed <- err
			return
		}
		bLeads <- ch
	}()
	pair, _, err := client.KV().Get(key, nil)
	if err != nil || pair == nil || pair.Session == "" {
		t.Fatalf("the lock key is not held: %+v %v", pair, err)
	}
	holderA := pair.Session
	// A's session lapses; its monitor sees the key lost at once (a blocking query woken by the write).
	srv.Advance(21 * time.Second)
	waitFor(t, lostA, "A's leadership channel to close")
	// The lock-delay (15 s) starts at the invalidation; B's client retries every 5 s of real time.
	srv.Advance(16 * time.Second)
	select {
	case err := <-bFailed:
		t.Fatalf("B's Lock failed: %v", err)
	case ch := <-bLeads:
		if ch == nil {
			t.Fatal("B gave up")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("B never got the lock") // a safety net: B's client retries every 5 s of real time
	}
	held, _, err := client.KV().Get(key, nil)
	if err != nil || held == nil || held.Session == "" || held.Session == holderA {
		t.Fatalf("after the hand-over the key is held by %+v (A was %s), %v", held, holderA, err)
	}
	if err := b.Unlock(); err != nil {
		t.Fatal(err)
	}
}

func TestOfficialClientsOverTLS(t *testing.T) {
	srv := standintest.Start(t, standintest.WithTLS())
	srv.SetEnv(t)
	nomadClient, err := nomad.NewClient(nomad.DefaultConfig()) // NOMAD_ADDR https://…, NOMAD_CACERT
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nomadClient.Agent().Self(); err != nil {
		t.Fatalf("nomad over TLS: %v", err)
	}
	consulClient, err := consul.NewClient(consul.DefaultConfig()) // CONSUL_HTTP_ADDR https://…, CONSUL_CACERT
	if err != nil {
		t.Fatal(err)
	}
	if _, err := consulClient.KV().Put(&consul.KVPair{Key: "tls", Value: []byte("yes")}, nil); err != nil {
		t.Fatalf("consul over TLS: %v", err)
	}
}

// waitFor waits on a channel the client closes in reaction to the test's own
// clock move; the wall-clock bound only turns a hang into a failure.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		t.Fatalf("waited 60 s for %s", what)
	}
}
