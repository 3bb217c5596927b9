package main

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	consul "github.com/hashicorp/consul/api"
)

func consulClient() *consul.Client {
	client, err := consul.NewClient(&consul.Config{Address: os.Getenv("CONSUL_HTTP_ADDR")})
	if err != nil {
		panic(err)
	}
	return client
}

func consulChecks(control Control) []Check {
	c := consulClient()
	kv := c.KV()
	return []Check{
		{"consul/agent-self-members-peers", func() error {
			name, err := c.Agent().NodeName()
			if err := First(err, Expect(name == "standin", "NodeName: %q", name)); err != nil {
				return err
			}
			self, err := c.Agent().Self()
			if err := First(err, Expect(self["Config"]["Datacenter"] == "dc1" && self["Member"]["Addr"] == "127.0.0.1", "self: %v", self["Config"])); err != nil {
				return err
			}
			members, err := c.Agent().Members(false)
			if err := First(err, Expect(len(members) == 1 && members[0].Name == "standin" && members[0].Status == 1 && members[0].Tags["role"] == "consul", "members: %+v", members)); err != nil {
				return err
			}
			peers, err := c.Status().Peers()
			if err := First(err, Expect(len(peers) == 1 && peers[0] == "127.0.0.1:8300", "peers: %v", peers)); err != nil {
				return err
			}
			leader, err := c.Status().Leader()
			return First(err, Expect(leader == "127.0.0.1:8300", "leader: %q", leader))
		}},
		{"consul/session-on-serfHealth", func() error {
			id, _, err := c.Session().Create(&consul.SessionEntry{Checks: []string{"serfHealth"}, TTL: "30s"}, nil)
			if err != nil {
				return err
			}
			info, _, err := c.Session().Info(id, nil)
			return First(err, Expect(info != nil && len(info.NodeChecks) == 1 && info.NodeChecks[0] == "serfHealth", "session: %+v", info))
		}},
		{"consul/session-lifecycle", func() error {
			id, _, err := c.Session().Create(&consul.SessionEntry{Name: "conformance", TTL: "15s", Behavior: consul.SessionBehaviorRelease}, nil)
			if err != nil {
				return err
			}
			info, _, err := c.Session().Info(id, nil)
			if err != nil {
				return err
			}
			if err := Expect(info != nil && info.ID == id && info.TTL == "15s" && info.LockDelay == 15*time.Second, "info: %+v", info); err != nil {
				return err
			}
			renewed, _, err := c.Session().Renew(id, nil)
			if err != nil {
				return err
			}
			if err := Expect(renewed != nil && renewed.ID == id, "renew: %+v", renewed); err != nil {
				return err
			}
			if _, err := c.Session().Destroy(id, nil); err != nil {
				return err
			}
			gone, _, err := c.Session().Info(id, nil)
			return First(err, Expect(gone == nil, "destroyed session still there: %+v", gone))
		}},
		{"consul/session-renew-periodic", func() error {
			id, _, err := c.Session().Create(&consul.SessionEntry{TTL: "10s"}, nil)
			if err != nil {
				return err
			}
			done := make(chan struct{})
			result := make(chan error, 1)
			go func() { result <- c.Session().RenewPeriodic("10s", id, nil, done) }()
			close(done) // RenewPeriodic destroys the session when told to stop
			select {
			case err := <-result:
				if err != nil {
					return err
				}
			case <-time.After(60 * time.Second):
				return fmt.Errorf("RenewPeriodic did not return")
			}
			gone, _, err := c.Session().Info(id, nil)
			return First(err, Expect(gone == nil, "session not destroyed by RenewPeriodic: %+v", gone))
		}},
		{"consul/session-ttl-expiry-on-virtual-clock", func() error {
			id, _, err := c.Session().Create(&consul.SessionEntry{TTL: "10s"}, nil)
			if err != nil {
				return err
			}
			if err := control.Advance("19s"); err != nil {
				return err
			}
			alive, _, err := c.Session().Info(id, nil)
			if err := First(err, Expect(alive != nil, "session gone before 2×TTL")); err != nil {
				return err
			}
			if err := control.Advance("2s"); err != nil {
				return err
			}
			gone, _, err := c.Session().Info(id, nil)
			return First(err, Expect(gone == nil, "session alive after 2×TTL: %+v", gone))
		}},
		{"consul/kv-cas", func() error {
			if _, err := kv.Put(&consul.KVPair{Key: "conformance/cas", Value: []byte("1")}, nil); err != nil {
				return err
			}
			pair, _, err := kv.Get("conformance/cas", nil)
			if err != nil || pair == nil {
				return fmt.Errorf("get: %v %v", pair, err)
			}
			stale, _, err := kv.CAS(&consul.KVPair{Key: "conformance/cas", Value: []byte("x"), ModifyIndex: pair.ModifyIndex + 1000}, nil)
			if err := First(err, Expect(!stale, "CAS with a wrong index succeeded")); err != nil {
				return err
			}
			ok, _, err := kv.CAS(&consul.KVPair{Key: "conformance/cas", Value: []byte("2"), ModifyIndex: pair.ModifyIndex}, nil)
			if err := First(err, Expect(ok, "CAS with the right index failed")); err != nil {
				return err
			}
			created, _, err := kv.CAS(&consul.KVPair{Key: "conformance/cas-new", Value: []byte("n"), ModifyIndex: 0}, nil)
			if err := First(err, Expect(created, "CAS 0 on a missing key failed")); err != nil {
				return err
			}
			again, _, err := kv.CAS(&consul.KVPair{Key: "conformance/cas-new", Value: []byte("n"), ModifyIndex: 0}, nil)
			if err := First(err, Expect(!again, "CAS 0 on an existing key succeeded")); err != nil {
				return err
			}
			now, _, _ := kv.Get("conformance/cas", nil)
			deleted, _, err := kv.DeleteCAS(&consul.KVPair{Key: "conformance/cas", ModifyIndex: now.ModifyIndex}, nil)
			return First(err, Expect(deleted, "DeleteCAS failed"))
		}},
		{"consul/kv-acquire-release", func() error {
			a, _, err := c.Session().Create(&consul.SessionEntry{LockDelay: time.Millisecond}, nil)
			if err != nil {
				return err
			}
			b, _, err := c.Session().Create(&consul.SessionEntry{LockDelay: time.Millisecond}, nil)
			if err != nil {
				return err
			}
			key := "conformance/mutex"
			got, _, err := kv.Acquire(&consul.KVPair{Key: key, Value: []byte("a"), Session: a}, nil)
			if err := First(err, Expect(got, "first acquire refused")); err != nil {
				return err
			}
			refused, _, err := kv.Acquire(&consul.KVPair{Key: key, Value: []byte("b"), Session: b}, nil)
			if err := First(err, Expect(!refused, "second contender acquired a held lock")); err != nil {
				return err
			}
			pair, _, _ := kv.Get(key, nil)
			if err := Expect(pair.Session == a && pair.LockIndex == 1, "held: %+v", pair); err != nil {
				return err
			}
			released, _, err := kv.Release(&consul.KVPair{Key: key, Session: a}, nil)
			if err := First(err, Expect(released, "release refused")); err != nil {
				return err
			}
			taken, _, err := kv.Acquire(&consul.KVPair{Key: key, Value: []byte("b"), Session: b}, nil)
			if err := First(err, Expect(taken, "acquire after release refused")); err != nil {
				return err
			}
			pair, _, _ = kv.Get(key, nil)
			return Expect(pair.Session == b && pair.LockIndex == 2, "handed over: %+v", pair)
		}},
		{"consul/lock-flags-exact-and-destroy", func() error {
			lock, err := c.LockOpts(&consul.LockOptions{Key: "conformance/lock-flags", SessionTTL: "30s"})
			if err != nil {
				return err
			}
			if _, err := lock.Lock(nil); err != nil {
				return err
			}
			pair, _, err := kv.Get("conformance/lock-flags", nil)
			if err := First(err, Expect(pair != nil && pair.Flags == consul.LockFlagValue, "flags read back %d, want %d", pair.Flags, uint64(consul.LockFlagValue))); err != nil {
				return err
			}
			if err := lock.Unlock(); err != nil {
				return err
			}
			// Destroy reads the key's flags back and refuses a key it does not recognise.
			return lock.Destroy()
		}},
		{"consul/lock-handover-by-destroy", func() error {
			return lockHandover(c, control, "conformance/leader-destroy", func(holder string) error {
				_, err := c.Session().Destroy(holder, nil)
				return err
			})
		}},
		{"consul/lock-handover-by-ttl-expiry", func() error {
			return lockHandover(c, control, "conformance/leader-ttl", func(string) error {
				return control.Advance("21s") // past 2 × the 10 s TTL
			})
		}},
		{"consul/semaphore-limit", func() error {
			opts := func() *consul.SemaphoreOptions {
				return &consul.SemaphoreOptions{Prefix: "conformance/pool", Limit: 2, SessionTTL: "30s"}
			}
			var sems [3]*consul.Semaphore
			for i := range sems {
				s, err := c.SemaphoreOpts(opts())
				if err != nil {
					return err
				}
				sems[i] = s
			}
			for i := 0; i < 2; i++ {
				held, err := sems[i].Acquire(nil)
				if err := First(err, Expect(held != nil, "holder %d not admitted", i)); err != nil {
					return err
				}
			}
			third := make(chan error, 1)
			go func() {
				held, err := sems[2].Acquire(nil)
				if err == nil && held == nil {
					err = fmt.Errorf("third contender gave up")
				}
				third <- err
			}()
			select {
			case err := <-third:
				return fmt.Errorf("a third contender got past a limit of 2 (err %v)", err)
			case <-time.After(500 * time.Millisecond):
			}
			if err := sems[0].Release(); err != nil {
				return err
			}
			select {
			case err := <-third:
				if err != nil {
					return err
				}
			case <-time.After(60 * time.Second):
				return fmt.Errorf("the third contender was not admitted after a release")
			}
			for _, s := range sems[1:] {
				if err := s.Release(); err != nil {
					return err
				}
			}
			// Destroy reads the .lock key's flags back: it fails unless they round-trip exactly.
			return sems[0].Destroy()
		}},
		{"consul/blocking-kv-loop-request-count", func() error {
			key := "conformance/watched"
			if _, err := kv.Put(&consul.KVPair{Key: key, Value: []byte("v1")}, nil); err != nil {
				return err
			}
			var requests int32
			first := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				var index uint64
				for {
					pair, meta, err := kv.Get(key, &consul.QueryOptions{WaitIndex: index, WaitTime: 60 * time.Second})
					n := atomic.AddInt32(&requests, 1)
					if n == 1 {
						close(first)
					}
					if err != nil {
						done <- err
						return
					}
					if pair != nil && string(pair.Value) == "stop" {
						done <- nil
						return
					}
					index = meta.LastIndex
				}
			}()
			if err := Within(first, "first read"); err != nil {
				return err
			}
			for i := 0; i < 20; i++ {
				if _, err := kv.Put(&consul.KVPair{Key: fmt.Sprintf("conformance/noise/%d", i), Value: []byte("x")}, nil); err != nil {
					return err
				}
			}
			if _, err := kv.Put(&consul.KVPair{Key: key, Value: []byte("stop")}, nil); err != nil {
				return err
			}
			select {
			case err := <-done:
				if err != nil {
					return err
				}
			case <-time.After(60 * time.Second):
				return fmt.Errorf("the loop never saw its key change")
			}
			n := atomic.LoadInt32(&requests)
			return Expect(n == 2, "the loop made %d requests for one change of its key amid 20 other writes, want 2", n)
		}},
		{"consul/blocking-list-wakes-on-delete", func() error {
			for _, k := range []string{"conformance/dir/a", "conformance/dir/b"} {
				if _, err := kv.Put(&consul.KVPair{Key: k, Value: []byte("x")}, nil); err != nil {
					return err
				}
			}
			_, meta, err := kv.List("conformance/dir/", nil)
			if err != nil {
				return err
			}
			woke := make(chan consul.KVPairs, 1)
			go func() {
				pairs, _, _ := kv.List("conformance/dir/", &consul.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 60 * time.Second})
				woke <- pairs
			}()
			if _, err := kv.Delete("conformance/dir/b", nil); err != nil {
				return err
			}
			select {
			case pairs := <-woke:
				return Expect(len(pairs) == 1 && pairs[0].Key == "conformance/dir/a", "after the delete: %v", pairs)
			case <-time.After(60 * time.Second):
				return fmt.Errorf("a list read did not wake on a delete under its prefix")
			}
		}},
	}
}

// lockHandover: contender A holds the lock, B waits in Lock(); lose(A's
// session) invalidates A, which must see its leadership channel close, and B
// takes the lock once the 15 s lock-delay has passed on the virtual clock.
func lockHandover(c *consul.Client, control Control, key string, lose func(holder string) error) error {
	// B's session outlives the jump of the virtual clock that expires A's (a real client renews
	// every TTL/2 of real time, which a jump of virtual time does not wait for).
	a, err := c.LockOpts(&consul.LockOptions{Key: key, SessionTTL: "10s"})
	if err != nil {
		return err
	}
	b, err := c.LockOpts(&consul.LockOptions{Key: key, SessionTTL: "120s"})
	if err != nil {
		return err
	}
	lostA, err := a.Lock(nil)
	if err != nil || lostA == nil {
		return fmt.Errorf("A did not get the lock: %v", err)
	}
	bLeads := make(chan (<-chan struct{}), 1)
	bErr := make(chan error, 1)
	go func() {
		ch, err := b.Lock(nil)
		if err != nil {
			bErr <- err
			return
		}
		bLeads <- ch
	}()
	pair, _, err := c.KV().Get(key, nil)
	if err != nil || pair == nil || pair.Session == "" {
		return fmt.Errorf("lock key not held: %+v %v", pair, err)
	}
	if err := lose(pair.Session); err != nil {
		return err
	}
	if err := Within(lostA, "A's leadership channel"); err != nil {
		return err
	}
	// The lock-delay (15 s by default) starts at the invalidation; B retries every 5 s of real time.
	if err := control.Advance("16s"); err != nil {
		return err
	}
	select {
	case err := <-bErr:
		return fmt.Errorf("B's Lock failed: %v", err)
	case ch := <-bLeads:
		if ch == nil {
			return fmt.Errorf("B gave up")
		}
	case <-time.After(60 * time.Second):
		return fmt.Errorf("B never got the lock")
	}
	held, _, err := c.KV().Get(key, nil)
	if err != nil {
		return err
	}
	if err := Expect(held.Session != "" && held.Session != pair.Session && held.LockIndex == pair.LockIndex+1, "after the handover: %+v", held); err != nil {
		return err
	}
	return b.Unlock()
}
