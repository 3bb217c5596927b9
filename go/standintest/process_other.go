//go:build !unix

package standintest

import "os/exec"

// Without process groups (Windows) only the process itself is stopped.
func inOwnGroup(*exec.Cmd)    {}
func terminate(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
func kill(cmd *exec.Cmd)      { _ = cmd.Process.Kill() }
