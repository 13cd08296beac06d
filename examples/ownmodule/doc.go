// Package ownmodule follows the README's "Use it from your module" section
// on a fresh temporary module, as a new user would: a clone beside it
// reached by a relative replace, the decodegap command as a tool of the
// module, a Run and a Compare benchmark, and a pull-request report between
// two commits of that module. It holds no code of its own: see its test.
package ownmodule
