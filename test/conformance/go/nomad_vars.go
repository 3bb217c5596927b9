package main

import (
	"context"
	"errors"

	nomad "github.com/hashicorp/nomad/api"
)

// nomadVarsChecks drives nomad/api's Variables() and its lock helpers: create,
// read, checked updates and deletes, prefix lists, and locks acquired,
// renewed, refused to a second holder and lost when the TTL lapses on the
// virtual clock.
func nomadVarsChecks(control Control) []Check {
	c := nomadClient()
	vars := c.Variables()
	casConflict := func(err error) (nomad.ErrCASConflict, bool) {
		var conflict nomad.ErrCASConflict
		ok := errors.As(err, &conflict)
		return conflict, ok
	}
	return []Check{
		{"nomad-vars/create-and-read", func() error {
			v := nomad.NewVariable("conformance/app")
			v.Items["user"] = "admin"
			created, _, err := vars.Create(v, nil)
			if err := First(err, Expect(created != nil && created.ModifyIndex > 0 && created.CreateTime > 0, "create: %+v", created)); err != nil {
				return err
			}
			read, meta, err := vars.Read("conformance/app", nil)
			if err := First(err, Expect(read != nil && read.Items["user"] == "admin" && read.Namespace == "default", "read: %+v", read)); err != nil {
				return err
			}
			if err := Expect(meta.LastIndex == created.ModifyIndex, "read index %d, want %d", meta.LastIndex, created.ModifyIndex); err != nil {
				return err
			}
			items, _, err := vars.GetVariableItems("conformance/app", nil)
			if err := First(err, Expect(items["user"] == "admin", "items: %v", items)); err != nil {
				return err
			}
			missing, _, err := vars.Read("conformance/absent", nil)
			if err := Expect(missing == nil && errors.Is(err, nomad.ErrVariablePathNotFound), "read absent: %+v %v", missing, err); err != nil {
				return err
			}
			peeked, _, err := vars.Peek("conformance/absent", nil)
			return First(err, Expect(peeked == nil, "peek absent: %+v", peeked))
		}},
		{"nomad-vars/checked-update-and-delete", func() error {
			v := nomad.NewVariable("conformance/cas")
			v.Items["n"] = "1"
			created, _, err := vars.CheckedCreate(v, nil)
			if err != nil {
				return err
			}
			_, _, err = vars.CheckedCreate(v, nil)
			if conflict, ok := casConflict(err); !ok || conflict.Conflict.ModifyIndex != created.ModifyIndex {
				return Expect(false, "second checked create: %v", err)
			}
			created.Items["n"] = "2"
			updated, _, err := vars.CheckedUpdate(created, nil)
			if err := First(err, Expect(updated != nil && updated.Items["n"] == "2" && updated.ModifyIndex > created.ModifyIndex, "checked update: %+v", updated)); err != nil {
				return err
			}
			created.Items["n"] = "3" // still the old ModifyIndex: stale
			_, _, err = vars.CheckedUpdate(created, nil)
			conflict, ok := casConflict(err)
			if err := Expect(ok && conflict.Conflict.Items["n"] == "2" && conflict.Conflict.ModifyIndex == updated.ModifyIndex, "stale checked update: %v", err); err != nil {
				return err
			}
			_, err = vars.CheckedDelete("conformance/cas", created.ModifyIndex, nil)
			if _, ok := casConflict(err); !ok {
				return Expect(false, "stale checked delete: %v", err)
			}
			if _, err := vars.CheckedDelete("conformance/cas", updated.ModifyIndex, nil); err != nil {
				return err
			}
			_, _, err = vars.Read("conformance/cas", nil)
			return Expect(errors.Is(err, nomad.ErrVariablePathNotFound), "read after delete: %v", err)
		}},
		{"nomad-vars/prefix-list-and-delete", func() error {
			for _, path := range []string{"list/a", "list/b", "other/c"} {
				v := nomad.NewVariable(path)
				v.Items["k"] = path
				if _, _, err := vars.Update(v, nil); err != nil {
					return err
				}
			}
			listed, _, err := vars.PrefixList("list/", nil)
			if err := First(err, Expect(len(listed) == 2 && listed[0].Path == "list/a" && listed[1].Path == "list/b", "prefix list: %+v", listed)); err != nil {
				return err
			}
			all, _, err := vars.List(nil)
			if err := First(err, Expect(len(all) >= 3, "list: %d", len(all))); err != nil {
				return err
			}
			if _, err := vars.Delete("list/a", nil); err != nil {
				return err
			}
			listed, _, err = vars.PrefixList("list/", nil)
			return First(err, Expect(len(listed) == 1 && listed[0].Path == "list/b", "after delete: %+v", listed))
		}},
		{"nomad-vars/lock-acquire-renew-release", func() error {
			v := &nomad.Variable{Path: "conformance/lock", Items: nomad.VariableItems{"owner": "a"}, Lock: &nomad.VariableLock{TTL: "15s", LockDelay: "15s"}}
			held, _, err := vars.AcquireLock(v, nil)
			if err := First(err, Expect(held != nil && held.Lock != nil && held.Lock.ID != "" && held.Lock.TTL == "15s", "acquire: %+v", held)); err != nil {
				return err
			}
			other := &nomad.Variable{Path: "conformance/lock", Lock: &nomad.VariableLock{TTL: "15s"}}
			if _, _, err := vars.AcquireLock(other, nil); err == nil {
				return Expect(false, "a second acquire succeeded")
			}
			renewed, _, err := vars.RenewLock(held, nil)
			if err := First(err, Expect(renewed != nil && renewed.Lock != nil && renewed.Lock.ID == held.Lock.ID, "renew: %+v", renewed)); err != nil {
				return err
			}
			released, _, err := vars.ReleaseLock(&nomad.Variable{Path: "conformance/lock", Lock: &nomad.VariableLock{ID: held.Lock.ID}}, nil)
			if err := First(err, Expect(released != nil && released.Lock == nil, "release: %+v", released)); err != nil {
				return err
			}
			read, _, err := vars.Read("conformance/lock", nil)
			return First(err, Expect(read != nil && read.Lock == nil && read.Items["owner"] == "a", "after release: %+v", read))
		}},
		{"nomad-vars/locks-helper-lapses-on-the-clock", func() error {
			ctx := context.Background()
			spec := nomad.Variable{Path: "conformance/leader", Lock: &nomad.VariableLock{TTL: "10s", LockDelay: "5s"}}
			first, err := c.Locks(nomad.WriteOptions{}, spec)
			if err != nil {
				return err
			}
			second, err := c.Locks(nomad.WriteOptions{}, spec)
			if err != nil {
				return err
			}
			path, err := first.Acquire(ctx)
			if err := First(err, Expect(path == "conformance/leader", "acquire: %q", path)); err != nil {
				return err
			}
			if _, err := second.Acquire(ctx); !errors.Is(err, nomad.ErrLockConflict) {
				return Expect(false, "second acquire while held: %v", err)
			}
			if err := first.Renew(ctx); err != nil {
				return err
			}
			// No renewals: the lock lapses after 2 × TTL and is released after its delay.
			if err := control.Advance("26s"); err != nil {
				return err
			}
			if err := first.Renew(ctx); err == nil {
				return Expect(false, "renew after the lapse succeeded")
			}
			if _, err := second.Acquire(ctx); err != nil {
				return err
			}
			if err := first.Release(ctx); !errors.Is(err, nomad.ErrLockConflict) {
				return Expect(false, "release by the old holder: %v", err)
			}
			return second.Release(ctx)
		}},
	}
}
