//go:build !linux

package sim

// lowerThreadPriority does nothing where the nice value is the process's
// rather than a thread's: lowering it would lower the whole program.
func lowerThreadPriority() {}
