module github.com/go-asyncio/asyncio

go 1.26.0

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
)

require github.com/google/go-cmp v0.7.0
