package main

import "errors"

// The groups below need parts that are still being built; they fail loudly rather than
// report figures they did not measure.

func runFastPath(config, *Results) error {
	return errors.New("not measured yet: needs the fast path wired to actions")
}
