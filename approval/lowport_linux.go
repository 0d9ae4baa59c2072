package approval

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PortOpenToAll says, on Linux, why any user could listen on port while the
// page is not running (the kernel's net.ipv4.ip_unprivileged_port_start is
// at or below it); "" when only a privileged process can.
func PortOpenToAll(port int) string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_unprivileged_port_start")
	if err != nil {
		return fmt.Sprintf("net.ipv4.ip_unprivileged_port_start cannot be read (%v)", err)
	}
	start, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Sprintf("net.ipv4.ip_unprivileged_port_start is %q", strings.TrimSpace(string(b)))
	}
	if port >= start {
		return fmt.Sprintf("port %d is at or above net.ipv4.ip_unprivileged_port_start (%d): any user may listen there while the service is down", port, start)
	}
	return ""
}
