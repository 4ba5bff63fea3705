// Command asynciovet checks Go code that uses github.com/go-asyncio/asyncio
// for the mistakes asyncio-style code makes: blocking calls inside tasks,
// awaits with the wrong task handle, swallowed cancellations, loop objects
// used from foreign goroutines, and tasks that nothing awaits.
//
// Run it on its own or as a vet tool:
//
//	asynciovet ./...
//	go vet -vettool=$(which asynciovet) ./...
//
// A finding on a line that carries, or follows a line that carries,
// "//asynciovet:ignore <check> <reason>" is suppressed. See README.md for
// each check with a before/after example.
package main

import (
	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/go-asyncio/asyncio/cmd/asynciovet/passes"
)

func main() { multichecker.Main(passes.All()...) }
