package workload

import (
	"bytes"
	"os"
	"strconv"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// serverCPUTime returns the user plus system CPU time of process pid, in
// ns, from /proc/<pid>/stat; -1 if it cannot be read.
func serverCPUTime(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted from the last ')', after which come state (field 3) and then
	// utime and stime (fields 14 and 15).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return -1
	}
	utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return (utime + stime) * (1e9 / clockTicks)
}
