package standintest

import (
	"errors"
	"os"
	"os/exec"
)

// command is how to run standin: the executable and the arguments before `start`.
type command struct {
	path   string
	prefix []string
}

// findStandin looks where a Go user's standin would be, in order: the
// WithBinary option, $STANDIN_BIN, standin on PATH, then npx from the working
// directory (a project that installed the npm package). `npx --no-install`
// never falls through to the registry: a missing package is an error, not a
// download in the middle of a test.
func findStandin(c *config) (command, error) {
	if c.binary != "" {
		return command{path: c.binary}, nil
	}
	if bin := os.Getenv("STANDIN_BIN"); bin != "" {
		return command{path: bin}, nil
	}
	if path, err := exec.LookPath("standin"); err == nil {
		return command{path: path}, nil
	}
	if npx, err := exec.LookPath("npx"); err == nil {
		return command{path: npx, prefix: []string{"--no-install", "standin"}}, nil
	}
	return command{}, errors.New("standintest: no standin executable: give WithBinary, set STANDIN_BIN, put standin on PATH, or install the npm package where npx finds it")
}
