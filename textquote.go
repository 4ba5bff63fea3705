package asyncio

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// quoteText is the one rule by which every text rendering of the package
// prints a string that comes from the program rather than from the library
// (a task name, a source path, a function name, what a task awaits, its
// creator): the string as it is when it is non-empty, valid UTF-8, made of
// printable characters only (strconv.IsPrint: letters, marks, numbers,
// punctuation, symbols and the ASCII space; no newline, tab, escape or
// other control or format character) and does not begin with a double
// quote; otherwise strconv.Quote of it, a Go string literal. So a name
// such as "x\n└── (T) fake" cannot add a line to WriteTree or WritePS,
// and escape sequences reach a terminal as text, never raw. The text
// renderings that follow Python's layouts (FormatCallGraph, T.String)
// quote with pyQuote instead, as Python's repr does. JSON needs neither:
// encoding/json escapes.
func quoteText(s string) string {
	if needsQuote(s) {
		return strconv.Quote(s)
	}
	return s
}

func needsQuote(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '"' || !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return true
		}
	}
	return false
}

func hex2(c byte) string { return hexN(uint32(c), 2) }

func hexN(v uint32, n int) string {
	s := strconv.FormatUint(uint64(v), 16)
	return strings.Repeat("0", n-len(s)) + s
}
