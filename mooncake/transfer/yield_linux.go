package transfer

import "syscall"

// osYield gives the CPU to another runnable thread, if any (sched_yield;
// a raw syscall: it never blocks).
func osYield() { _, _, _ = syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
