package main

import (
	"fmt"
	"os"
	"strings"

	nomad "github.com/hashicorp/nomad/api"
)

// nomadACLChecks run against a cluster whose fixture enables ACLs and seeds a
// management token (NOMAD_TOKEN): the official client's ACL calls.
func nomadACLChecks() []Check {
	management := os.Getenv("NOMAD_TOKEN")
	client := func(secret string) *nomad.Client {
		c, err := nomad.NewClient(&nomad.Config{Address: os.Getenv("NOMAD_ADDR"), SecretID: secret})
		if err != nil {
			panic(err)
		}
		return c
	}
	root := client(management)
	anonymous := client("")
	var deployerSecret string
	return []Check{
		{"nomad-acl/bootstrapped-by-fixture", func() error {
			_, _, err := anonymous.ACLTokens().Bootstrap(nil)
			return Expect(err != nil && strings.Contains(err.Error(), "ACL bootstrap already done (reset index:"), "bootstrap of a seeded cluster: %v", err)
		}},
		{"nomad-acl/anonymous-denied", func() error {
			_, _, err := anonymous.Jobs().List(nil)
			return Expect(err != nil && strings.Contains(err.Error(), "403") && strings.Contains(err.Error(), "Permission denied"), "anonymous list: %v", err)
		}},
		{"nomad-acl/policy-and-token", func() error {
			policy := &nomad.ACLPolicy{Name: "deployer", Description: "submit jobs in default", Rules: `namespace "default" { policy = "write" }`}
			if _, err := root.ACLPolicies().Upsert(policy, nil); err != nil {
				return err
			}
			token, _, err := root.ACLTokens().Create(&nomad.ACLToken{Name: "ci", Type: "client", Policies: []string{"deployer"}}, nil)
			if err != nil {
				return err
			}
			deployerSecret = token.SecretID
			self, _, err := client(deployerSecret).ACLTokens().Self(nil)
			return First(err, Expect(self != nil && self.AccessorID == token.AccessorID && len(self.Policies) == 1, "self: %+v", self))
		}},
		{"nomad-acl/token-capabilities", func() error {
			deployer := client(deployerSecret)
			if _, _, err := deployer.Jobs().Register(batchJob("acl-job"), nil); err != nil {
				return fmt.Errorf("register with write on default: %v", err)
			}
			if _, _, err := deployer.Jobs().List(nil); err != nil {
				return err
			}
			_, _, err := deployer.Nodes().List(nil)
			return Expect(err != nil && strings.Contains(err.Error(), "Permission denied"), "node list without node:read: %v", err)
		}},
	}
}
