// Package compat holds the drop-in compatibility suite: it runs the real
// cycle engine on state directories in the shapes the original OODA-loop
// project writes (hand-written fixtures under testdata/) and checks that
// nothing is reset, lost or counted twice, and that the state ooda writes
// reads back with the same numbers through a re-statement of the
// original's status reader. The package has no code of its own; see
// docs/compat.md for the shapes it covers.
package compat
