package sim

import "syscall"

// backgroundNice is how much lower a background simulation's thread runs
// than the process: at nice +10 the kernel gives it about a tenth of the CPU
// time of a thread at the process's priority when both want the same core,
// and the rest when nobody else does. (Lower still would delay the Go
// runtime's stop-the-world pauses, which wait for this thread too, when the
// machine is saturated.)
const backgroundNice = 10

// lowerThreadPriority raises the calling thread's nice value by
// backgroundNice, up to 19. On Linux a nice value is a thread's, and
// setpriority's who 0 is the calling thread. It cannot fail in a way that
// matters: lowering one's priority needs no privilege.
func lowerThreadPriority() {
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0) // the raw call: 20 - nice
	if err != nil {
		return
	}
	nice := 20 - prio
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, min(nice+backgroundNice, 19))
}
