// Package prreport compares every benchmark of a module between two
// revisions, as a pull-request check would.
package prreport
