// Package standintest starts standin (a deterministic emulator of the Nomad,
// Consul and Cloud Endpoints echo APIs on a virtual clock) from a Go test, the
// way Consul's sdk/testutil and Nomad's testutil start a real server: one call
// gives the addresses, the server stops with the test.
//
//	func TestDeploy(t *testing.T) {
//		srv := standintest.Start(t)
//		srv.SetEnv(t) // NOMAD_ADDR, CONSUL_HTTP_ADDR, … for the official clients
//		// … register a job with github.com/hashicorp/nomad/api …
//		srv.Advance(time.Minute)
//	}
//
// The package uses the standard library only. It runs the standin executable
// (see Start for where it is looked for) on free loopback ports and drives its
// control API (/_standin); a control call that standin refuses fails the test
// given to Start with standin's message.
package standintest
