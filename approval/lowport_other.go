//go:build !linux

package approval

import "fmt"

// PortOpenToAll says why any user could listen on port while the page is
// not running: on this system every user may bind every port.
func PortOpenToAll(port int) string {
	return fmt.Sprintf("any user may listen on port %d on this system while the service is down", port)
}
