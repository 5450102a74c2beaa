// Package arch holds the architecture test: it checks the dependency rules
// of DEVELOPERS.md and BRIEF.md on the real import graph (go list), so a
// forbidden dependency fails CI instead of being caught in review.
package arch
