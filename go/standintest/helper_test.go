package standintest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/standin-dev/standin/go/standintest"
)

// These tests use the standard library only (the control API and plain
// net/http); clients_test.go drives the official clients.

var start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestStartGivesFourURLsAndTheClockMoves(t *testing.T) {
	srv := standintest.Start(t)
	for name, u := range map[string]string{"NomadAddr": srv.NomadAddr, "ConsulAddr": srv.ConsulAddr, "EchoURL": srv.EchoURL} {
		if !strings.HasPrefix(u, "http://127.0.0.1:") || strings.HasSuffix(u, ":0") {
			t.Errorf("%s = %q, want a loopback URL with a port", name, u)
		}
	}
	if srv.ControlURL != srv.NomadAddr+"/_standin" {
		t.Errorf("ControlURL = %q", srv.ControlURL)
	}
	if got := srv.Now(); !got.Equal(start) {
		t.Fatalf("Now() = %s, want the shipped fixture's start %s", got, start)
	}
	moved := srv.Advance(90*time.Minute + 1500*time.Millisecond)
	want := start.Add(90*time.Minute + 1500*time.Millisecond)
	if !moved.Now.Equal(want) || !srv.Now().Equal(want) {
		t.Fatalf("after Advance: %s / %s, want %s", moved.Now, srv.Now(), want)
	}
	later := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CET", 3600))
	if moved := srv.AdvanceTo(later); !moved.Now.Equal(later) {
		t.Fatalf("AdvanceTo: %s, want %s", moved.Now, later)
	}
	srv.Reset()
	if got := srv.Now(); !got.Equal(start) {
		t.Fatalf("after Reset: %s", got)
	}
}

func TestOptionsReachTheCommandLine(t *testing.T) {
	at := time.Date(2030, 6, 1, 12, 0, 0, 0, time.UTC)
	tb := &recordingTB{TB: t}
	srv := standintest.Start(tb, standintest.WithFixture("token-expiry"), standintest.WithSeed(42), standintest.WithStartTime(at),
		standintest.WithControlToken("s3cret"), standintest.WithArgs("--no-tape"))
	if got := srv.Now(); !got.Equal(at) {
		t.Fatalf("Now() = %s, want %s", got, at)
	}
	var ready struct {
		Seed int `json:"seed"`
	}
	if err := json.Unmarshal(getBody(t, srv.ControlURL+"/ready", "Bearer s3cret"), &ready); err != nil || ready.Seed != 42 {
		t.Fatalf("ready: %+v %v", ready, err)
	}
	// Without the token the control API refuses: the helper sends it.
	if status := getStatus(t, srv.ControlURL+"/clock", ""); status != 401 {
		t.Fatalf("control API without the token: %d, want 401", status)
	}
	msg := fatalOf(t, tb, func() { _ = srv.Tape() })
	if !strings.Contains(msg, "409") {
		t.Fatalf("Tape() with --no-tape: %q, want standin's 409", msg)
	}
}

func TestClockModeOption(t *testing.T) {
	srv := standintest.Start(t, standintest.WithClock(standintest.ClockAuto))
	var clock struct {
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal(getBody(t, srv.ControlURL+"/clock", ""), &clock); err != nil || clock.Mode != "auto" {
		t.Fatalf("clock: %+v %v", clock, err)
	}
}

func TestTLS(t *testing.T) {
	srv := standintest.Start(t, standintest.WithTLS())
	if srv.CACert == "" || !strings.HasPrefix(srv.NomadAddr, "https://") {
		t.Fatalf("with TLS: CACert %q, NomadAddr %q", srv.CACert, srv.NomadAddr)
	}
	srv.Advance(time.Second) // the helper trusts the CA
	srv.SetEnv(t)
	for _, name := range []string{"NOMAD_CACERT", "CONSUL_CACERT"} {
		if got := getenv(name); got != srv.CACert {
			t.Errorf("%s = %q", name, got)
		}
	}
	if got := getenv("CONSUL_HTTP_ADDR"); got != srv.ConsulAddr {
		t.Errorf("CONSUL_HTTP_ADDR = %q, want %q", got, srv.ConsulAddr)
	}
}

func TestSetEnv(t *testing.T) {
	srv := standintest.Start(t)
	t.Setenv("NOMAD_TOKEN", "a-real-cluster's")
	srv.SetEnv(t)
	want := map[string]string{
		"NOMAD_ADDR":          srv.NomadAddr,
		"CONSUL_HTTP_ADDR":    strings.TrimPrefix(srv.ConsulAddr, "http://"),
		"STANDIN_CONTROL_URL": srv.ControlURL,
		"STANDIN_ECHO_URL":    srv.EchoURL,
		"NOMAD_TOKEN":         "",
	}
	for name, value := range want {
		if got := getenv(name); got != value {
			t.Errorf("%s = %q, want %q", name, got, value)
		}
	}
}

func TestSnapshotRestoreAndApplyFixture(t *testing.T) {
	srv := standintest.Start(t)
	srv.ApplyFixture(map[string]any{"registry": map[string]any{"kv": []map[string]any{{"Key": "app/config", "Value": "v1"}}}})
	if got := string(getBody(t, srv.ConsulAddr+"/v1/kv/app/config?raw", "")); got != "v1" {
		t.Fatalf("after ApplyFixture: %q", got)
	}
	snapshot := srv.Snapshot()
	srv.Advance(time.Hour)
	srv.Reset()
	if status := getStatus(t, srv.ConsulAddr+"/v1/kv/app/config", ""); status != 404 {
		t.Fatalf("after Reset the key is still there: %d", status)
	}
	srv.Restore(snapshot)
	if got := string(getBody(t, srv.ConsulAddr+"/v1/kv/app/config?raw", "")); got != "v1" || !srv.Now().Equal(start) {
		t.Fatalf("after Restore: %q at %s", got, srv.Now())
	}
	srv.ApplyFixture([]byte(`{"registry":{"kv":[{"Key":"app/raw","Value":"r"}]}}`))
	if got := string(getBody(t, srv.ConsulAddr+"/v1/kv/app/raw?raw", "")); got != "r" {
		t.Fatalf("raw ApplyFixture: %q", got)
	}
	if tape := srv.Tape(); !json.Valid(tape) || len(tape) == 0 {
		t.Fatalf("Tape() is not JSON: %.100q", tape)
	}
}

func TestAwaitAndAct(t *testing.T) {
	srv := standintest.Start(t)
	var session struct{ ID string }
	if err := json.Unmarshal(put(t, srv.ConsulAddr+"/v1/session/create", `{"TTL":"10s"}`), &session); err != nil {
		t.Fatal(err)
	}
	awaited := srv.Await(standintest.Until{"session": {"id": session.ID, "gone": true}}, time.Minute)
	if !awaited.Met || !awaited.Now.After(start.Add(10*time.Second)) || awaited.Now.After(start.Add(21*time.Second)) {
		t.Fatalf("Await: %+v", awaited)
	}
	put(t, srv.ConsulAddr+"/v1/kv/app/flag", "on")
	acted := srv.Act("kv-delete", standintest.Args{"key": "app/flag"})
	if acted.Do != "kv-delete" || acted.Service != "registry" || acted.Index == 0 || string(acted.Result) != `{"deleted":true}` {
		t.Fatalf("Act: %+v (result %s)", acted, acted.Result)
	}
	if status := getStatus(t, srv.ConsulAddr+"/v1/kv/app/flag", ""); status != 404 {
		t.Fatalf("after kv-delete: %d", status)
	}
}

func TestControlRefusalsFailTheTestWithStandinsMessage(t *testing.T) {
	tb := &recordingTB{TB: t}
	srv := standintest.Start(tb)
	srv.Advance(time.Minute)
	msg := fatalOf(t, tb, func() { srv.AdvanceTo(start) })
	if !strings.Contains(msg, "409") || !strings.Contains(msg, "/_standin/clock/advance-to") {
		t.Errorf("AdvanceTo backwards: %q", msg)
	}
	msg = fatalOf(t, tb, func() { srv.Act("no-such-action", nil) })
	if !strings.Contains(msg, "404") || !strings.Contains(msg, "no-such-action") {
		t.Errorf("unknown action: %q", msg)
	}
	msg = fatalOf(t, tb, func() { srv.Await(standintest.Until{"kv": {"key": "never"}}, time.Second) })
	if !strings.Contains(msg, "408") {
		t.Errorf("Await that times out: %q", msg)
	}
}

func TestAFailedStartIsStandinsOneLineError(t *testing.T) {
	tb := &recordingTB{TB: t}
	msg := fatalOf(t, tb, func() { standintest.Start(tb, standintest.WithFixture("no-such-fixture")) })
	want := "standintest: standin: no-such-fixture: no shipped fixture by that name"
	if !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
		t.Fatalf("failed start: %q, want one line starting %q", msg, want)
	}
	msg = fatalOf(t, tb, func() { standintest.Start(tb, standintest.WithBinary("/nonexistent/standin")) })
	if !strings.Contains(msg, "cannot run /nonexistent/standin") {
		t.Fatalf("missing binary: %q", msg)
	}
}

func TestFindsStandinInNodeModulesLikeNpx(t *testing.T) {
	bin := os.Getenv("STANDIN_BIN")
	if bin == "" {
		t.Skip("needs STANDIN_BIN to link a node_modules/.bin/standin to")
	}
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "node_modules", ".bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(project, "node_modules", ".bin", "standin")); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(project, "services", "api")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	chdir(t, nested)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	// PATH holds node alone (for the script's #!): neither standin nor npx can be what is found.
	onlyNode := t.TempDir()
	if err := os.Symlink(node, filepath.Join(onlyNode, "node")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STANDIN_BIN", "")
	t.Setenv("PATH", onlyNode)
	srv := standintest.Start(t)
	if got := srv.Now(); !got.Equal(start) {
		t.Fatalf("Now() = %s", got)
	}
}

// chdir changes the working directory for the rest of t (Go 1.24's t.Chdir, for Go 1.21).
func chdir(t *testing.T, dir string) {
	t.Helper()
	previous, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chdir(previous) })
}

// recordingTB is a testing.TB whose Fatal records the message and stops the
// function under test; the rest (Cleanup, TempDir, …) is the real test's.
type recordingTB struct {
	testing.TB
	message string
}

type fatalled struct{}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatal(args ...any) {
	r.message = fmt.Sprint(args...)
	panic(fatalled{})
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.message = fmt.Sprintf(format, args...)
	panic(fatalled{})
}

// fatalOf runs f, which fails through tb, and returns what it failed with; f that does not fail fails t.
func fatalOf(t *testing.T, tb *recordingTB, f func()) (message string) {
	t.Helper()
	tb.message = ""
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(fatalled); !ok {
				panic(r)
			}
			message = tb.message
		}
	}()
	f()
	t.Fatal("expected a test failure, got none")
	return ""
}
