// The conformance program: HashiCorp's official Go clients driven against a
// running standin. Each named check prints one JSON line ({"check","ok",
// "error"}), which test/conformance/go-clients.test.ts turns into one test each.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Run runs each check in order, printing {"check","ok","error"}; a panic fails
// only its own check.
func Run(list []Check) {
	only := os.Getenv("CHECKS_ONLY")
	for _, c := range list {
		if only != "" && !strings.Contains(","+only+",", ","+c.Name+",") {
			continue
		}
		err := safely(c.Fn)
		line := map[string]interface{}{"check": c.Name, "ok": err == nil}
		if err != nil {
			line["error"] = err.Error()
		}
		out, _ := json.Marshal(line)
		fmt.Println(string(out))
	}
}

type Check struct {
	Name string
	Fn   func() error
}

func safely(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn()
}

// Control moves standin's virtual clock and the like, through its control API.
type Control struct{ Base string }

func (c Control) Post(path string, body interface{}) (map[string]interface{}, error) {
	data, _ := json.Marshal(body)
	res, err := http.Post(c.Base+path, "application/json", bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out map[string]interface{}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%s: status %d, undecodable body: %v", path, res.StatusCode, err)
	}
	if res.StatusCode != 200 {
		return out, fmt.Errorf("%s: status %d: %v", path, res.StatusCode, out)
	}
	return out, nil
}

// Advance moves the virtual clock forward by a Go duration.
func (c Control) Advance(by string) error {
	_, err := c.Post("/_standin/clock/advance", map[string]string{"by": by})
	return err
}

// Within waits for ch to be closed or to yield, or fails after a generous real bound.
func Within[T any](ch <-chan T, what string) error {
	select {
	case <-ch:
		return nil
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s: nothing after 60 s", what)
	}
}

// Expect returns an error naming what differs.
func Expect(ok bool, format string, args ...interface{}) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// First returns the first non-nil error.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
