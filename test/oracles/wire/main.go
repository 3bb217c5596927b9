// Command wire prints, for the api structs the official clients decode standin's
// answers into, the JSON keys the products' encoders write for each struct: the
// wire-shape oracle of test/conformance/oracle-wire.test.ts.
//
// Built in GOPATH mode with Nomad v1.9.7's api first in GOPATH (see SOURCES.md),
// so "nomad.*" types are the pinned Nomad's and "consul.*" types consul/api
// v1.34.3's. Only reflection is used: nothing is encoded or sent.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	consul "github.com/hashicorp/consul/api"
	nomad "github.com/hashicorp/nomad/api"
)

// Field is one key a struct's encoder writes.
type Field struct {
	Key string `json:"key"`
	// Omit is true when the encoder leaves the key out for a zero value
	// (`omitempty`, or Nomad's struct-level omitempty): absent is then correct.
	Omit bool `json:"omit"`
	// Why says, for a key the api struct always writes but the product's server
	// does not, where the server's struct differs (see serverOmits).
	Why string `json:"why,omitempty"`
	// Type describes the value: "scalar", "any", "struct:<name>",
	// "slice:<type>" or "map:<type>" (pointers are followed; null is always allowed).
	Type string `json:"type"`
}

// roots are the structs the clients decode each route's answer into.
var roots = map[string]reflect.Type{
	"nomad.Job":                            reflect.TypeOf(nomad.Job{}),
	"nomad.JobListStub":                    reflect.TypeOf(nomad.JobListStub{}),
	"nomad.JobSummary":                     reflect.TypeOf(nomad.JobSummary{}),
	"nomad.JobVersionsResponse":            reflect.TypeOf(nomad.JobVersionsResponse{}),
	"nomad.JobRegisterResponse":            reflect.TypeOf(nomad.JobRegisterResponse{}),
	"nomad.JobDeregisterResponse":          reflect.TypeOf(nomad.JobDeregisterResponse{}),
	"nomad.JobPlanResponse":                reflect.TypeOf(nomad.JobPlanResponse{}),
	"nomad.JobDispatchResponse":            reflect.TypeOf(nomad.JobDispatchResponse{}),
	"nomad.JobScaleStatusResponse":         reflect.TypeOf(nomad.JobScaleStatusResponse{}),
	"nomad.Allocation":                     reflect.TypeOf(nomad.Allocation{}),
	"nomad.AllocationListStub":             reflect.TypeOf(nomad.AllocationListStub{}),
	"nomad.Evaluation":                     reflect.TypeOf(nomad.Evaluation{}),
	"nomad.Deployment":                     reflect.TypeOf(nomad.Deployment{}),
	"nomad.Node":                           reflect.TypeOf(nomad.Node{}),
	"nomad.NodeListStub":                   reflect.TypeOf(nomad.NodeListStub{}),
	"nomad.NodePool":                       reflect.TypeOf(nomad.NodePool{}),
	"nomad.ServiceRegistration":            reflect.TypeOf(nomad.ServiceRegistration{}),
	"nomad.ServiceRegistrationListStub":    reflect.TypeOf(nomad.ServiceRegistrationListStub{}),
	"nomad.Variable":                       reflect.TypeOf(nomad.Variable{}),
	"nomad.VariableMetadata":               reflect.TypeOf(nomad.VariableMetadata{}),
	"nomad.AgentSelf":                      reflect.TypeOf(nomad.AgentSelf{}),
	"nomad.AgentMember":                    reflect.TypeOf(nomad.AgentMember{}),
	"nomad.ServerMembers":                  reflect.TypeOf(nomad.ServerMembers{}),
	"nomad.NodeEligibilityUpdateResponse":  reflect.TypeOf(nomad.NodeEligibilityUpdateResponse{}),
	"nomad.SchedulerConfigurationResponse": reflect.TypeOf(nomad.SchedulerConfigurationResponse{}),
	"nomad.Namespace":                      reflect.TypeOf(nomad.Namespace{}),
	"consul.UserEvent":                     reflect.TypeOf(consul.UserEvent{}),
	"consul.TxnResponse":                   reflect.TypeOf(consul.TxnResponse{}),
	"consul.AgentService":                  reflect.TypeOf(consul.AgentService{}),
	"consul.AgentCheck":                    reflect.TypeOf(consul.AgentCheck{}),
	"consul.AgentMember":                   reflect.TypeOf(consul.AgentMember{}),
	"consul.AgentServiceChecksInfo":        reflect.TypeOf(consul.AgentServiceChecksInfo{}),
	"consul.CatalogService":                reflect.TypeOf(consul.CatalogService{}),
	"consul.CatalogNode":                   reflect.TypeOf(consul.CatalogNode{}),
	"consul.CatalogNodeServiceList":        reflect.TypeOf(consul.CatalogNodeServiceList{}),
	"consul.Node":                          reflect.TypeOf(consul.Node{}),
	"consul.ServiceEntry":                  reflect.TypeOf(consul.ServiceEntry{}),
	"consul.HealthCheck":                   reflect.TypeOf(consul.HealthCheck{}),
	"consul.KVPair":                        reflect.TypeOf(consul.KVPair{}),
	"consul.SessionEntry":                  reflect.TypeOf(consul.SessionEntry{}),
}

// structOmitEmpty names the Nomad structs whose server-side twins (nomad/structs)
// carry `_struct bool codec:",omitempty"`: go-msgpack then leaves out every zero
// field, in JSON too (codec/helper.go parseStructInfo). The api twins do not
// carry the marker, so it is listed here (api PortMapping is the server's
// AllocatedPortMapping).
var structOmitEmpty = map[string]bool{
	"nomad.Allocation":      true,
	"nomad.Evaluation":      true,
	"nomad.Plan":            true,
	"nomad.NetworkResource": true,
	"nomad.Port":            true,
	"nomad.PortMapping":     true,
}

// serverOmits are api fields the product's server never writes, or leaves out
// when zero, because the struct it encodes (Nomad's nomad/structs, Consul's
// agent/structs, read at the pinned versions) lacks the field or tags it
// omitempty. The api struct keeps them for requests or older servers; an
// answer without them is the product's own.
var serverOmits = map[string]string{
	"nomad.Job.Migrate":                                           "structs.Job has no job-level migrate (api copies it into groups)",
	"nomad.Job.Reschedule":                                        "structs.Job has no job-level reschedule (api copies it into groups)",
	"nomad.LogConfig.Enabled":                                     "structs.LogConfig has Disabled only (api keeps Enabled for pre-1.5.4 jobs)",
	"nomad.Service.CheckRestart":                                  "structs.Service has none (api merges it into each check)",
	"nomad.ScalingPolicy.Namespace":                               "structs.ScalingPolicy has none (the namespace is in Target)",
	"nomad.TaskEvent.DiskSize":                                    "structs.TaskEvent has DiskLimit only",
	"consul.TxnResult.Node":                                       "structs.TxnResult tags each result omitempty",
	"consul.TxnResult.Service":                                    "structs.TxnResult tags each result omitempty",
	"consul.TxnResult.Check":                                      "structs.TxnResult tags each result omitempty",
	"consul.CatalogService.Checks":                                "structs.ServiceNode has no Checks",
	"consul.CatalogService.ServiceTaggedAddresses":                "structs.ServiceNode tags it omitempty",
	"consul.KVPair.Session":                                       "structs.DirEntry tags it omitempty",
	"consul.SessionEntry.Checks":                                  "structs.Session tags it omitempty (deprecated in 1.7)",
	"consul.HealthCheckDefinition.Body":                           "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.DeregisterCriticalServiceAfter": "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.GRPC":                           "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.GRPCUseTLS":                     "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.HTTP":                           "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.Header":                         "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.Interval":                       "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.Method":                         "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.OSService":                      "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.TCP":                            "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.TCPUseTLS":                      "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.TLSServerName":                  "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.TLSSkipVerify":                  "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.Timeout":                        "structs.HealthCheckDefinition tags every field omitempty",
	"consul.HealthCheckDefinition.UDP":                            "structs.HealthCheckDefinition tags every field omitempty",
}

// headerMeta are embedded structs the clients fill from response headers, not the body.
var headerMeta = map[string]bool{"QueryMeta": true, "WriteMeta": true}

type walker struct{ types map[string][]Field }

func product(t reflect.Type) string {
	switch {
	case strings.Contains(t.PkgPath(), "hashicorp/nomad/"):
		return "nomad"
	case strings.Contains(t.PkgPath(), "hashicorp/consul/"):
		return "consul"
	}
	return ""
}

func (w *walker) describe(t reflect.Type) string {
	for t.Kind() == reflect.Ptr {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		p := product(t)
		if p == "" || t.Name() == "" {
			return "scalar" // time.Time and the like encode as one JSON string
		}
		name := p + "." + t.Name()
		w.walk(name, t)
		return "struct:" + name
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "scalar" // []byte is base64
		}
		return "slice:" + w.describe(t.Elem())
	case reflect.Map:
		return "map:" + w.describe(t.Elem())
	case reflect.Interface:
		return "any"
	}
	return "scalar"
}

// tagOf reads the tag the product's encoder reads: go-msgpack looks at `codec`
// then `json`; encoding/json (Consul) at `json`.
func tagOf(f reflect.StructField, p string) string {
	if p == "nomad" {
		if tag, ok := f.Tag.Lookup("codec"); ok {
			return tag
		}
	}
	return f.Tag.Get("json")
}

func (w *walker) walk(name string, t reflect.Type) {
	if _, seen := w.types[name]; seen {
		return
	}
	w.types[name] = nil // placeholder against recursion
	var fields []Field
	w.fields(name, t, product(t), structOmitEmpty[name], &fields)
	sort.Slice(fields, func(i, j int) bool { return fields[i].Key < fields[j].Key })
	w.types[name] = fields
}

func (w *walker) fields(name string, t reflect.Type, p string, omitAll bool, out *[]Field) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := tagOf(f, p)
		if tag == "-" {
			continue
		}
		parts := strings.Split(tag, ",")
		key := parts[0]
		omit := omitAll
		for _, opt := range parts[1:] {
			if opt == "omitempty" || opt == "omitzero" {
				omit = true
			}
		}
		ft := f.Type
		for ft.Kind() == reflect.Ptr {
			ft = ft.Elem()
		}
		if f.Anonymous && key == "" && ft.Kind() == reflect.Struct {
			if headerMeta[ft.Name()] {
				continue
			}
			w.fields(name, ft, p, omitAll, out) // embedded structs are inlined by both encoders
			continue
		}
		if f.PkgPath != "" {
			continue // unexported
		}
		if key == "" {
			key = f.Name
		}
		why, serverOmitsIt := serverOmits[name+"."+key]
		*out = append(*out, Field{Key: key, Omit: omit || serverOmitsIt, Why: why, Type: w.describe(f.Type)})
	}
}

// has reports whether "<struct>.<key>" is a key the walk found.
func (w *walker) has(qualified string) bool {
	dot := strings.LastIndex(qualified, ".")
	for _, f := range w.types[qualified[:dot]] {
		if f.Key == qualified[dot+1:] {
			return true
		}
	}
	return false
}

func main() {
	w := &walker{types: map[string][]Field{}}
	names := make([]string, 0, len(roots))
	for name, t := range roots {
		names = append(names, name)
		w.walk(name, t)
	}
	sort.Strings(names)
	for key := range serverOmits {
		if !w.has(key) {
			fmt.Fprintf(os.Stderr, "serverOmits names %s, which no api struct here has\n", key)
			os.Exit(1)
		}
	}
	out := map[string]any{"roots": names, "types": w.types}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
