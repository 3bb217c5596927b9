package main

import (
	"fmt"
	"os"
)

// Usage: conformance consul|consul-agent|consul-health|consul-txn|nomad|nomad-acl|nomad-vars|nomad-pools|nomad-fs|nomad-alloc|nomad-services|nomad-hcl|nomad-operator|nomad-search|nomad-lifecycle  (addresses from CONSUL_HTTP_ADDR / NOMAD_ADDR,
// standin's control API from STANDIN_CONTROL_URL)
func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: conformance consul|consul-agent|consul-health|consul-txn|nomad|nomad-acl|nomad-vars|nomad-pools|nomad-fs|nomad-alloc|nomad-services|nomad-hcl|nomad-operator|nomad-search|nomad-lifecycle")
		os.Exit(2)
	}
	control := Control{Base: os.Getenv("STANDIN_CONTROL_URL")}
	switch os.Args[1] {
	case "consul":
		Run(consulChecks(control))
	case "consul-agent":
		Run(consulAgentChecks(control))
	case "consul-health":
		Run(consulHealthChecks(control))
	case "consul-txn":
		Run(consulTxnChecks(control))
	case "nomad":
		Run(nomadChecks(control))
	case "nomad-acl":
		Run(nomadACLChecks())
	case "nomad-vars":
		Run(nomadVarsChecks(control))
	case "nomad-pools":
		Run(nomadPoolsChecks(control))
	case "nomad-fs":
		Run(nomadFSChecks(control))
	case "nomad-alloc":
		Run(nomadAllocChecks(control))
	case "nomad-services":
		Run(nomadServicesChecks(control))
	case "nomad-hcl":
		Run(nomadHCLChecks(control))
	case "nomad-operator":
		Run(nomadOperatorChecks(control))
	case "nomad-search":
		Run(nomadSearchChecks(control))
	case "nomad-lifecycle":
		Run(nomadLifecycleChecks(control))
	default:
		fmt.Fprintln(os.Stderr, "unknown suite", os.Args[1])
		os.Exit(2)
	}
}
