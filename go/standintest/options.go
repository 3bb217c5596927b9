package standintest

import (
	"strconv"
	"time"
)

// An Option configures the standin that Start runs; each maps to a flag of
// `standin start`.
type Option func(*config)

type config struct {
	binary       string
	fixtures     []string
	seed         *int64
	startTime    string
	controlToken string
	tls          bool
	clock        string
	extraArgs    []string
	startTimeout time.Duration
}

// WithBinary runs this standin executable instead of looking for one
// (STANDIN_BIN, then standin on PATH, then npx from the working directory).
func WithBinary(path string) Option { return func(c *config) { c.binary = path } }

// WithFixture loads a fixture: a file path or a shipped fixture's name
// ("token-expiry", …). Repeatable: fixtures are applied in order, replacing the
// shipped default.
func WithFixture(pathOrName string) Option {
	return func(c *config) { c.fixtures = append(c.fixtures, pathOrName) }
}

// WithSeed overrides the fixture's seed (the source of every generated ID).
func WithSeed(seed int64) Option { return func(c *config) { c.seed = &seed } }

// WithStartTime sets the virtual clock's start instant (default: the
// fixture's, 2026-01-01T00:00:00Z in the shipped one).
func WithStartTime(at time.Time) Option {
	return func(c *config) { c.startTime = formatInstant(at) }
}

// WithControlToken requires this bearer token on the control API; the Server's
// methods send it.
func WithControlToken(token string) Option { return func(c *config) { c.controlToken = token } }

// WithTLS serves every port over HTTPS with a certificate made at start; the
// Server's CACert names the CA file to trust, and SetEnv exports it.
func WithTLS() Option { return func(c *config) { c.tls = true } }

// ClockMode is the virtual clock's mode.
type ClockMode string

const (
	// ClockManual moves only when the test says so (Advance, AdvanceTo, Await).
	ClockManual ClockMode = "manual"
	// ClockAuto skips idle virtual time on its own while clients wait.
	ClockAuto ClockMode = "auto"
	// ClockRealtime follows the wall clock.
	ClockRealtime ClockMode = "realtime"
)

// WithClock sets the clock mode (default: the fixture's, manual in the shipped one).
func WithClock(mode ClockMode) Option { return func(c *config) { c.clock = string(mode) } }

// WithArgs appends further `standin start` flags, e.g. WithArgs("--no-tape").
func WithArgs(args ...string) Option {
	return func(c *config) { c.extraArgs = append(c.extraArgs, args...) }
}

// WithStartTimeout bounds how long Start waits for standin to be ready (default 60s,
// which covers a cold npx).
func WithStartTimeout(d time.Duration) Option { return func(c *config) { c.startTimeout = d } }

// startArgs are the arguments after the executable: free loopback ports, the
// ready file, then the options' flags (the extra arguments last, so they can
// override any).
func (c *config) startArgs(readyFile string) []string {
	args := []string{"start", "--host", "127.0.0.1", "--scheduler-port", "0", "--registry-port", "0", "--echo-port", "0",
		"--ready-file", readyFile, "--log-level", "warn"}
	for _, fixture := range c.fixtures {
		args = append(args, "--fixture", fixture)
	}
	if c.seed != nil {
		args = append(args, "--seed", strconv.FormatInt(*c.seed, 10))
	}
	if c.startTime != "" {
		args = append(args, "--start-time", c.startTime)
	}
	if c.controlToken != "" {
		args = append(args, "--control-token", c.controlToken)
	}
	if c.tls {
		args = append(args, "--tls")
	}
	if c.clock != "" {
		args = append(args, "--clock", c.clock)
	}
	return append(args, c.extraArgs...)
}

// formatInstant is RFC 3339 in UTC with the fraction only when there is one
// (standin keeps milliseconds).
func formatInstant(at time.Time) string { return at.UTC().Format(time.RFC3339Nano) }
