// Package startup is the bench's Go start-up measure (bench/lib/go-startup.mjs
// runs it): how long a Go test waits from standintest.Start to the answer of
// its first request, against a bare node:http process (bench/lib/bare-server.mjs)
// that Go starts and asks the same way. Runs alternate, so a change in the
// machine's load weighs on both sides alike; the first of each is discarded
// (files not yet in the page cache). The times go to BENCH_OUT as JSON.
package startup

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/standin-dev/standin/go/standintest"
)

type times struct {
	Standin []float64 `json:"standin"`
	Bare    []float64 `json:"bare"`
}

func TestStartupTimes(t *testing.T) {
	runs, err := strconv.Atoi(os.Getenv("BENCH_RUNS"))
	if err != nil || runs < 1 {
		t.Skip("run by bench/lib/go-startup.mjs, which sets BENCH_RUNS, BENCH_NODE, BENCH_BARE_SERVER and BENCH_OUT")
	}
	var measured times
	for i := -1; i < runs; i++ {
		standin := timeStandin(t)
		bare := timeBare(t)
		if i >= 0 {
			measured.Standin = append(measured.Standin, standin)
			measured.Bare = append(measured.Bare, bare)
		}
	}
	out, err := json.Marshal(measured)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("BENCH_OUT"), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// timeStandin: Start (STANDIN_BIN says which standin) and the first request, in a
// subtest so the helper's cleanup stops standin before the next run.
func timeStandin(t *testing.T) (ms float64) {
	t.Run("standin", func(t *testing.T) {
		began := time.Now()
		srv := standintest.Start(t)
		get(t, srv.NomadAddr+"/v1/status/leader")
		ms = float64(time.Since(began)) / float64(time.Millisecond)
	})
	return ms
}

// timeBare: the bare server started from Go, its address read from its first
// line, and its first answer.
func timeBare(t *testing.T) float64 {
	began := time.Now()
	cmd := exec.Command(os.Getenv("BENCH_NODE"), os.Getenv("BENCH_BARE_SERVER"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("bare server: %v", err)
	}
	get(t, strings.TrimSpace(strings.TrimPrefix(line, "listening ")))
	return float64(time.Since(began)) / float64(time.Millisecond)
}

func get(t testing.TB, url string) {
	response, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer response.Body.Close()
	if _, err := io.Copy(io.Discard, response.Body); err != nil || response.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, response.StatusCode, err)
	}
}
