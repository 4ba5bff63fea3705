module github.com/go-asyncio/asyncio

go 1.24.0

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.40.0
)

require github.com/google/go-cmp v0.7.0
