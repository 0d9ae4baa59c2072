package service

import (
	"fmt"
	"strings"
)

// SystemdUnit is the unit that runs the service as its user, with the
// system read-only around it and no way to gain privileges. The service
// exits non-zero when it must stop (a fatal error): systemd starts it again,
// every 2 s for as long as it takes (no start limit: a local account that
// makes it fail repeatedly must not stop it for good).
func SystemdUnit(p Paths, user string) string {
	return fmt.Sprintf(`[Unit]
Description=walletgate: a wallet for AI assistants, under its own user
After=network-online.target
Wants=network-online.target
StartLimitIntervalSec=0

[Service]
Type=simple
User=%[1]s
Group=%[1]s
ExecStart=%[2]s service run --config %[3]s
Restart=on-failure
RestartSec=2
RuntimeDirectory=walletgate
RuntimeDirectoryMode=0755
UMask=0077
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=true
PrivateTmp=true
ReadWritePaths=%[4]s
# The approval page's port is below 1024, which only this capability binds:
# no desktop user can take the page's address, even while this is down.
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
AmbientCapabilities=CAP_NET_BIND_SERVICE
RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6

[Install]
WantedBy=multi-user.target
`, user, p.Binary(), p.Config, p.Home)
}

// LaunchdPlist is the launchd daemon (/Library/LaunchDaemons) that runs the
// service as its user on macOS, its log (stderr) in the service's home.
func LaunchdPlist(p Paths, user string) string {
	esc := func(s string) string {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	}
	return fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
  <key>Label</key><string>%s</string>
  <key>UserName</key><string>%s</string>
  <key>ProgramArguments</key>
  <array><string>%s</string><string>service</string><string>run</string><string>--config</string><string>%s</string></array>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><true/>
  <key>Umask</key><integer>63</integer>
  <key>StandardErrorPath</key><string>%s</string>
</dict>
</plist>
`, LaunchdLabel, esc(user), esc(p.Binary()), esc(p.Config), esc(p.join(p.Home, "service.log")))
}
