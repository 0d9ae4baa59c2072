package service

import "runtime"

var isLinux = runtime.GOOS == "linux"
