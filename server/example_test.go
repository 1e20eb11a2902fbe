package server_test

import (
	"fmt"

	"github.com/headroom-planner/headroom/server"
)

// A server binds to loopback freely; any other address needs a token.
func ExampleCheckAddr() {
	fmt.Println(server.CheckAddr("127.0.0.1:8080", ""))
	fmt.Println(server.CheckAddr("0.0.0.0:8080", ""))
	fmt.Println(server.CheckAddr("0.0.0.0:8080", "s3cret"))
	// Output:
	// <nil>
	// address "0.0.0.0:8080" is reachable from other machines: give a --token (or HEADROOM_TOKEN) to serve on it
	// <nil>
}
