package standintest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
)

// command is how to run standin: the executable and the arguments before `start`.
type command struct {
	path   string
	prefix []string
	// viaNpx: a failure is more likely "not installed here" than standin's own.
	viaNpx bool
}

// findStandin looks where a Go user's standin would be, in order: the
// WithBinary option, $STANDIN_BIN, standin on PATH, then what `npx standin`
// runs from the working directory: node_modules/.bin/standin there or in a
// parent (found here directly, which spares npx's own start-up), and last npx
// itself. `npx --no-install` never installs: a missing package is an error,
// not a download in the middle of a test.
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
	if local, ok := nodeModulesBin(); ok {
		return command{path: local}, nil
	}
	if npx, err := exec.LookPath("npx"); err == nil {
		return command{path: npx, prefix: []string{"--no-install", "standin"}, viaNpx: true}, nil
	}
	return command{}, errors.New("standintest: no standin executable: give WithBinary, set STANDIN_BIN, put standin on PATH, or install the npm package where npx finds it")
}

// nodeModulesBin is node_modules/.bin/standin in the working directory or the
// nearest parent that has one, as npm's exec finds it.
func nodeModulesBin() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		candidate := filepath.Join(dir, "node_modules", ".bin", "standin")
		if info, err := os.Stat(candidate); err == nil && !info.IsDir() {
			return candidate, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
