// Package passes holds the asynciovet analyzers: static checks for the
// mistakes that asyncio-style Go code makes with
// github.com/go-asyncio/asyncio (and its networking package .../aio).
//
// The analyzers never import the library. They recognise its API by package
// path and names through go/types, so they work on any version of the
// library that keeps those names, on code that uses the old layout
// (networking in the root package) as well as the new one, and on the stub
// packages under testdata.
//
// Every analyzer follows the same rules:
//
//   - A false positive costs more than a miss: when the types are missing
//     (a package that does not type-check), a call cannot be resolved
//     statically, or the code is not the shape the check knows, the
//     analyzer stays silent.
//
//   - A finding on a line that carries, or directly follows a line that
//     carries, a comment
//
//     //asynciovet:ignore <check>[,<check>...] <reason>
//
//     is suppressed. The reason is mandatory: a directive without one does
//     not suppress anything, so every exception says why it exists.
//
//   - Generated files and the non-test files of the library itself (whose
//     implementation of suspension legitimately blocks the task's goroutine)
//     are not checked.
package passes
