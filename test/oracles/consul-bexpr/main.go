// The Consul filter oracle: go-bexpr v0.1.2 (the version Consul 1.21/1.22 pins) called as Consul's
// endpoints call it, bexpr.CreateFilter(expression, nil, <the reply's slice>) and then Execute, over
// typed Go values shaped like the structs Consul filters (types.go), so that the conformance suite can
// compare standin's typed evaluator (src/core/filter/typed) with the real one on the same data.
//
// stdin:  {"seed": 1, "perKind": 400, "objects": {"node": [<JSON as standin sends it>, …], …}}
// stdout: {"warnings": […], "cases": [{"kind", "filter", "target", "createError"?, "results": [{"m"|"e"|"p"}]}]}
// Each object is decoded from standin's JSON into its typed struct (a field standin sends with the
// wrong JSON kind is a warning). Expressions are generated from those values with math/rand and the
// given seed (generate.go), so the same input gives the same cases. A filter is created once per case
// (a creation error is Consul's 500 with that text) and executed over each object alone, so every
// object gets its own answer; a panic is caught and reported as {"p": message}.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"

	"github.com/hashicorp/consul/api"
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
}

type outCase struct {
	Kind        string   `json:"kind"`
	Filter      string   `json:"filter"`
	Target      string   `json:"target"`
	CreateError string   `json:"createError,omitempty"`
	Results     []result `json:"results,omitempty"`
}

type output struct {
	Warnings []string  `json:"warnings"`
	Cases    []outCase `json:"cases"`
}

// sliceOf: for each kind, the reply type Consul passes to CreateFilter (its element type is what
// go-bexpr validates against): structs.Nodes, structs.ServiceNodes, structs.CheckServiceNodes (values,
// not pointers), structs.HealthChecks, the NodeServices' map of *NodeService, and the map of
// *api.AgentService /v1/agent/services builds, and the agent's map of *HealthCheck.
var sliceOf = map[string]reflect.Type{
	"node":             reflect.TypeOf([]*Node{}),
	"serviceNode":      reflect.TypeOf([]*ServiceNode{}),
	"checkServiceNode": reflect.TypeOf([]CheckServiceNode{}),
	"healthCheck":      reflect.TypeOf([]*HealthCheck{}),
	"nodeChecks":       reflect.TypeOf([]*HealthCheck{}),
	"serviceChecks":    reflect.TypeOf([]*HealthCheck{}),
	"nodeServiceList":  reflect.TypeOf([]*NodeService{}),
	"nodeService":      reflect.TypeOf([]*NodeService{}),
	"agentService":     reflect.TypeOf([]*api.AgentService{}),
	"agentCheck":       reflect.TypeOf([]*HealthCheck{}),
}

// untyped: the kinds whose endpoint creates its filter without a type — /v1/agent/checks calls
// bexpr.CreateFilter(expr, nil, nil) — so that only a parse error fails at creation, and go-bexpr
// validates the selectors against the first row it evaluates (an error per row here).
var untyped = map[string]bool{"agentCheck": true}

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
		sliceType, ok := sliceOf[kind]
		if !ok {
			fmt.Fprintln(os.Stderr, "unknown kind:", kind)
			os.Exit(2)
		}
		objects := decodeAll(sliceType, in.Objects[kind], kind, &out.Warnings)
		values := make([]interface{}, objects.Len())
		for i := range values {
			values[i] = objects.Index(i).Interface()
		}
		gen := newGenerator(in.Seed, kind, values)
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

// decodeAll decodes each object into the slice's element type; the result is a slice of that type.
func decodeAll(sliceType reflect.Type, raws []json.RawMessage, kind string, warnings *[]string) reflect.Value {
	objects := reflect.MakeSlice(sliceType, len(raws), len(raws))
	for i, raw := range raws {
		target := objects.Index(i).Addr().Interface()
		// encoding/json keeps decoding past a field of the wrong kind; the first such field is reported.
		if err := json.Unmarshal(raw, target); err != nil {
			*warnings = append(*warnings, fmt.Sprintf("%s #%d: %v", kind, i, err))
		}
	}
	return objects
}

func evaluateCase(kind, expression, target string, objects reflect.Value) outCase {
	c := outCase{Kind: kind, Filter: expression, Target: target}
	var dataType interface{}
	if !untyped[kind] {
		dataType = objects.Interface()
	}
	filter, err := bexpr.CreateFilter(expression, nil, dataType)
	if err != nil {
		c.CreateError = err.Error()
		return c
	}
	c.Results = make([]result, objects.Len())
	for i := range c.Results {
		c.Results[i] = executeOne(filter, objects.Slice(i, i+1))
	}
	return c
}

func executeOne(filter *bexpr.Filter, one reflect.Value) (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{Panic: fmt.Sprint(p)}
		}
	}()
	kept, err := filter.Execute(one.Interface())
	if err != nil {
		return result{Error: err.Error()}
	}
	matched := reflect.ValueOf(kept).Len() == 1
	return result{Match: &matched}
}

// typeName is the Go type a selector reaches, for grouping differences by category.
func typeName(v reflect.Value) string {
	if !v.IsValid() {
		return "invalid"
	}
	return v.Type().String()
}
