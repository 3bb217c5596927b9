// Command hcl-oracle answers `POST /v1/jobs/parse` the way Nomad v1.9.7's
// handler does (command/agent/job_endpoint.go JobsParseRequest), for many
// requests in one process: one JSON object a line on stdin
// ({"name", "hcl", "variables", "canonicalize"}), one a line on stdout
// ({"name", "status", "body"}), body being the exact response text.
//
// It runs Nomad's own jobspec2 parser and api.Job.Canonicalize, and encodes
// with the codec Nomad's HTTP layer uses (go-msgpack/v2 JsonHandle with
// HTMLCharsAsIs), so every unset field is written as null unless its json tag
// says omitempty. See SOURCES.md for the sources it builds against.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/jobspec2"
)

type request struct {
	Name         string `json:"name"`
	HCL          string `json:"hcl"`
	Variables    string `json:"variables"`
	Canonicalize bool   `json:"canonicalize"`
}

type response struct {
	Name   string `json:"name"`
	Status int    `json:"status"`
	Body   string `json:"body"`
	// Diagnostics lists each HCL diagnostic of a refusal. The body names the
	// first and counts the others, and which one is first can vary from run
	// to run (hcl iterates Go maps), so the comparison needs them all.
	Diagnostics []string `json:"diagnostics,omitempty"`
}

// jsonHandle is nomad/structs.JsonHandle at v1.9.7.
var jsonHandle = &codec.JsonHandle{HTMLCharsAsIs: true}

func answer(req request) (status int, body string, diagnostics []string) {
	// A panic in the parser is a 500 in Nomad (the HTTP server recovers it); keep going.
	defer func() {
		if r := recover(); r != nil {
			status, body, diagnostics = 500, fmt.Sprintf("panic: %v", r), nil
		}
	}()
	if req.HCL == "" {
		return 400, "Job spec is empty", nil
	}
	job, err := jobspec2.ParseWithConfig(&jobspec2.ParseConfig{
		Path:       "input.hcl",
		Body:       []byte(req.HCL),
		AllowFS:    false,
		VarContent: req.Variables,
	})
	if err != nil {
		if diags, ok := err.(hcl.Diagnostics); ok {
			for _, d := range diags {
				diagnostics = append(diagnostics, d.Error())
			}
		}
		return 400, fmt.Sprintf("Failed to parse job: %v", err), diagnostics
	}
	if req.Canonicalize {
		job.Canonicalize()
	}
	return 200, encode(job), nil
}

func encode(job *api.Job) string {
	var out []byte
	if err := codec.NewEncoderBytes(&out, jsonHandle).Encode(job); err != nil {
		panic(err)
	}
	return string(out)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintf(os.Stderr, "bad request line: %v\n", err)
			os.Exit(2)
		}
		status, body, diagnostics := answer(req)
		if err := enc.Encode(response{Name: req.Name, Status: status, Body: body, Diagnostics: diagnostics}); err != nil {
			fmt.Fprintf(os.Stderr, "write: %v\n", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "read: %v\n", err)
		os.Exit(2)
	}
}
