package asyncio

import (
	"strconv"
	"strings"

	"github.com/go-asyncio/asyncio/internal/textquote"
)

// quoteText applies the module's one quoting rule (internal/textquote.Text)
// to a string that comes from the program rather than from the library.
// The text renderings that follow Python's layouts (FormatCallGraph,
// T.String) quote with pyQuote instead, as Python's repr does.
func quoteText(s string) string { return textquote.Text(s) }

func hex2(c byte) string { return hexN(uint32(c), 2) }

func hexN(v uint32, n int) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", n-len(s)) + s
}
