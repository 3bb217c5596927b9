package standintest

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Server is a running standin, stopped when the test that started it ends.
type Server struct {
	// NomadAddr is the scheduler's URL (http://127.0.0.1:<port>), what NOMAD_ADDR takes.
	NomadAddr string
	// ConsulAddr is the registry's URL (http://127.0.0.1:<port>); consul/api's
	// Config.Address takes it with its scheme.
	ConsulAddr string
	// EchoURL is the echo service's URL.
	EchoURL string
	// ControlURL is the control API's root (…/_standin).
	ControlURL string
	// CACert is, with WithTLS, the CA certificate file to trust ("" otherwise).
	CACert string
	// PID is the standin process's id.
	PID int

	t      testing.TB
	token  string
	client *http.Client
}

// readyFile is what `standin start --ready-file` writes once every port listens.
type readyFile struct {
	PID       int    `json:"pid"`
	Scheduler string `json:"scheduler"`
	Registry  string `json:"registry"`
	Echo      string `json:"echo"`
	Control   string `json:"control"`
	CA        string `json:"ca"`
}

const (
	defaultStartTimeout = 60 * time.Second
	// How long a stop waits for standin's own shutdown before killing its process group.
	stopGrace = 10 * time.Second
	// How often Start looks for the ready file: standin writes it atomically once ready.
	readyPoll = 5 * time.Millisecond
)

// Start runs standin on free loopback ports and returns once it is ready. It
// is stopped in t.Cleanup (SIGTERM, then SIGKILL to its process group if it
// does not exit). Where standin is looked for: WithBinary, $STANDIN_BIN,
// standin on PATH, then `npx --no-install standin` from the working directory.
// A standin that cannot start fails the test with its one-line error.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := &config{startTimeout: defaultStartTimeout}
	for _, opt := range opts {
		opt(cfg)
	}
	run, err := findStandin(cfg)
	if err != nil {
		t.Fatal(err)
	}
	readyPath := filepath.Join(t.TempDir(), "ready.json")
	cmd := exec.Command(run.path, append(append([]string(nil), run.prefix...), cfg.startArgs(readyPath)...)...)
	stderr := &tailBuffer{}
	cmd.Stdout = io.Discard
	cmd.Stderr = stderr
	inOwnGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("standintest: cannot run %s: %v", run.path, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	// Registered before waiting, so a Start that fails below leaves no process behind.
	t.Cleanup(func() { stop(cmd, exited) })

	ready, err := awaitReadyFile(readyPath, exited, cfg.startTimeout)
	if err != nil {
		kill(cmd)
		if run.viaNpx && errors.Is(err, errExited) {
			t.Fatalf("standintest: no standin executable (not WithBinary, STANDIN_BIN, PATH or node_modules/.bin) and `npx --no-install standin` failed: %s", stderr.leadingLines(2))
		}
		if line := stderr.lastLine(); line != "" && errors.Is(err, errExited) {
			t.Fatalf("standintest: %s", line)
		}
		t.Fatalf("standintest: %v (stderr: %q)", err, stderr.lastLine())
	}
	client, err := httpClient(ready.CA)
	if err != nil {
		t.Fatalf("standintest: %v", err)
	}
	return &Server{
		NomadAddr:  ready.Scheduler,
		ConsulAddr: ready.Registry,
		EchoURL:    ready.Echo,
		ControlURL: ready.Control,
		CACert:     ready.CA,
		PID:        ready.PID,
		t:          t,
		token:      cfg.controlToken,
		client:     client,
	}
}

var errExited = errors.New("standin exited before it was ready")

// awaitReadyFile waits for the ready file, for the process to end, or for the timeout, whichever comes first.
func awaitReadyFile(path string, exited <-chan struct{}, timeout time.Duration) (readyFile, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for {
		if text, err := os.ReadFile(path); err == nil {
			var ready readyFile
			if err := json.Unmarshal(text, &ready); err != nil || ready.Control == "" {
				return readyFile{}, fmt.Errorf("%s is not a standin ready file", path)
			}
			return ready, nil
		}
		select {
		case <-exited:
			return readyFile{}, errExited
		case <-deadline.C:
			return readyFile{}, fmt.Errorf("standin was not ready within %s", timeout)
		case <-tick.C:
		}
	}
}

// stop asks standin to shut down and kills its process group if it has not within stopGrace.
func stop(cmd *exec.Cmd, exited <-chan struct{}) {
	select {
	case <-exited:
		return
	default:
	}
	terminate(cmd)
	select {
	case <-exited:
	case <-time.After(stopGrace):
		kill(cmd)
		<-exited
	}
}

// httpClient trusts standin's CA when it serves HTTPS; no proxy: standin is on loopback.
func httpClient(caFile string) (*http.Client, error) {
	transport := &http.Transport{Proxy: nil}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("cannot read standin's CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("standin's CA %s holds no certificate", caFile)
		}
		transport.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: transport}, nil
}

// SetEnv points the official clients and standin's tools at this server for
// the rest of t (t.Setenv restores the old values): NOMAD_ADDR,
// CONSUL_HTTP_ADDR, STANDIN_*_URL, and with TLS NOMAD_CACERT, CONSUL_CACERT.
// Tokens the environment held for a real cluster are cleared.
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	registry, err := url.Parse(s.ConsulAddr)
	if err != nil {
		t.Fatalf("standintest: registry URL %q: %v", s.ConsulAddr, err)
	}
	consulAddr := registry.Host // host:port, the form consul's own tools print
	if registry.Scheme == "https" {
		consulAddr = s.ConsulAddr
	}
	env := map[string]string{
		"NOMAD_ADDR":            s.NomadAddr,
		"CONSUL_HTTP_ADDR":      consulAddr,
		"STANDIN_SCHEDULER_URL": s.NomadAddr,
		"STANDIN_REGISTRY_URL":  s.ConsulAddr,
		"STANDIN_ECHO_URL":      s.EchoURL,
		"STANDIN_CONTROL_URL":   s.ControlURL,
		"STANDIN_URL":           s.NomadAddr,
		"NOMAD_TOKEN":           "",
		"CONSUL_HTTP_TOKEN":     "",
		"NOMAD_REGION":          "",
		"NOMAD_NAMESPACE":       "",
	}
	if s.CACert != "" {
		env["NOMAD_CACERT"] = s.CACert
		env["CONSUL_CACERT"] = s.CACert
		env["CONSUL_HTTP_SSL"] = "true"
	}
	for name, value := range env {
		t.Setenv(name, value)
	}
}

// trimControl is the control URL without a trailing slash.
func (s *Server) controlURL(path string) string {
	return strings.TrimRight(s.ControlURL, "/") + path
}
