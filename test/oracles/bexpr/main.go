// The go-bexpr oracle: go-bexpr v0.1.13 (the version Nomad 1.9 pins) evaluating filter expressions
// over typed Go values shaped like the structs Nomad filters (types.go), so that the conformance
// suite can compare standin's hand-written evaluator with the real one on the same data.
//
// stdin:  {"seed": 1, "perKind": 500, "objects": {"job": [<JSON as standin sends it>, …], …}}
// stdout: {"warnings": […], "cases": [{"kind", "filter", "target", "parseError"?, "results": [{"m"|"e"|"p"}]}]}
// Each object is decoded from standin's JSON into its typed struct (a field standin sends with the
// wrong JSON kind is a warning). Expressions are generated from those values with math/rand and the
// given seed (generate.go), so the same input gives the same cases. Evaluation is what Nomad's
// paginator does: bexpr.CreateEvaluator(filter) once, then Evaluate(*T) per object; a panic is
// caught and reported as {"p": message} (Nomad would fail the request).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/hashicorp/go-bexpr"
)

type input struct {
	Seed    int64                        `json:"seed"`
	PerKind int                          `json:"perKind"`
	Objects map[string][]json.RawMessage `json:"objects"`
}

type result struct {
	Match *bool  `json:"m,omitempty"`
	Error string `json:"e,omitempty"`
	Panic string `json:"p,omitempty"`
	// Alts: every outcome seen when the answer depends on Go's random map order (see orderRuns)
	Alts []result `json:"alts,omitempty"`
}

// orderRuns: how often an expression with any/all is evaluated per object. Go iterates a map in a
// random order, so `any Config as k, v { … }` can match on one entry before another entry's error is
// reached, or not: every outcome seen is reported, and standin (which iterates in key order) must
// give one of them. For the small maps here (one bucket, a random starting slot of 8) 100 runs miss
// an order with a probability below 2e-6.
const orderRuns = 100

type outCase struct {
	Kind       string   `json:"kind"`
	Filter     string   `json:"filter"`
	Target     string   `json:"target"`
	ParseError string   `json:"parseError,omitempty"`
	Results    []result `json:"results,omitempty"`
}

type output struct {
	Warnings []string  `json:"warnings"`
	Cases    []outCase `json:"cases"`
}

// newOf returns a pointer to a fresh value of the struct each kind of object decodes into.
var newOf = map[string]func() interface{}{
	"job":        func() interface{} { return &Job{} },
	"allocation": func() interface{} { return &Allocation{} },
	"evaluation": func() interface{} { return &Evaluation{} },
	"deployment": func() interface{} { return &Deployment{} },
	"node":       func() interface{} { return &Node{} },
	"service":    func() interface{} { return &ServiceRegistration{} },
	"variable":   func() interface{} { return &VariableEncrypted{} },
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "bad input:", err)
		os.Exit(2)
	}
	out := output{Warnings: []string{}, Cases: []outCase{}}
	kinds := make([]string, 0, len(in.Objects))
	for kind := range in.Objects {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		newValue, ok := newOf[kind]
		if !ok {
			fmt.Fprintln(os.Stderr, "unknown kind:", kind)
			os.Exit(2)
		}
		objects := decodeAll(newValue, in.Objects[kind], kind, &out.Warnings)
		gen := newGenerator(in.Seed, kind, objects)
		for i := 0; i < in.PerKind; i++ {
			filter, target := gen.expression()
			out.Cases = append(out.Cases, evaluateCase(kind, filter, target, objects))
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, "encode:", err)
		os.Exit(1)
	}
}

func decodeAll(newValue func() interface{}, raws []json.RawMessage, kind string, warnings *[]string) []interface{} {
	objects := make([]interface{}, len(raws))
	for i, raw := range raws {
		v := newValue()
		// encoding/json keeps decoding past a field of the wrong kind; the first such field is reported.
		if err := json.Unmarshal(raw, v); err != nil {
			*warnings = append(*warnings, fmt.Sprintf("%s #%d: %v", kind, i, err))
		}
		objects[i] = v
	}
	return objects
}

func evaluateCase(kind, filter, target string, objects []interface{}) outCase {
	c := outCase{Kind: kind, Filter: filter, Target: target}
	eval, err := bexpr.CreateEvaluator(filter)
	if err != nil {
		c.ParseError = err.Error()
		return c
	}
	runs := 1
	if strings.Contains(filter, "any ") || strings.Contains(filter, "all ") {
		runs = orderRuns
	}
	c.Results = make([]result, len(objects))
	for i, obj := range objects {
		first := evaluateOne(eval, obj)
		seen := map[string]bool{outcomeKey(first): true}
		alts := []result{first}
		for r := 1; r < runs; r++ {
			next := evaluateOne(eval, obj)
			if key := outcomeKey(next); !seen[key] {
				seen[key] = true
				alts = append(alts, next)
			}
		}
		if len(alts) > 1 {
			first.Alts = alts
		}
		c.Results[i] = first
	}
	return c
}

func outcomeKey(r result) string {
	switch {
	case r.Match != nil:
		return fmt.Sprint(*r.Match)
	case r.Panic != "":
		return "panic: " + r.Panic
	default:
		return "error: " + r.Error
	}
}

func evaluateOne(eval *bexpr.Evaluator, obj interface{}) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{Panic: fmt.Sprint(p)}
		}
	}()
	matched, err := eval.Evaluate(obj)
	if err != nil {
		return result{Error: err.Error()}
	}
	return result{Match: &matched}
}

// typeName is the Go type a selector reaches, for grouping differences by category.
func typeName(v reflect.Value) string {
	if !v.IsValid() {
		return "invalid"
	}
	return v.Type().String()
}
