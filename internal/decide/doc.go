// Package decide is Step 3 of the cycle: from an observation and an
// orientation it scores every candidate domain and picks the one to act on.
//
// Decide is pure: it takes values (including now) and returns values, never
// touching the filesystem, the clock, the network or a process. Every option
// comes back with each scoring term as it entered the sum and the reasons it
// won or lost, so a decision can be audited and replayed exactly. The
// pipeline and glossary are in README.md beside this file.
package decide
