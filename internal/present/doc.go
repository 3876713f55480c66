// Package present draws what a person sees of the loop: the dashboard of
// `ooda status`, its Orient view, the Loop Scorecard and the Cycle Card of
// Step 7. It reads the state through the state package's Store and writes
// nothing; each view is built as data first (the --json documents) and
// rendered from that data, so the text and the JSON never disagree.
package present
