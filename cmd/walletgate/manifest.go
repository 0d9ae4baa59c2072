package main

// `walletgate bundle-manifest`: the MCP Bundle's manifest.json, from the
// hand-written parts in mcpb/manifest.json (the form, the environment it
// fills, the texts) and what only the binary knows: its version and the
// tools it serves with every opt-in, each with the description the server
// gives it. scripts/bundle runs it once per platform.

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"

	"github.com/walletgate/walletgate/tools"
)

func cmdBundleManifest(argv []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("walletgate bundle-manifest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	template := fs.String("template", "mcpb/manifest.json", "the hand-written manifest")
	platform := fs.String("platform", "", "the bundle's one platform: darwin, linux or win32 (default: all three)")
	confirm := fs.String("confirm", "", "the confirmation mode the form proposes (default: the template's)")
	if err := parseFlags(fs, argv); err != nil {
		return err
	}
	raw, err := os.ReadFile(*template)
	if err != nil {
		return usagef("bundle-manifest: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return usagef("bundle-manifest: %s is not JSON: %v", *template, err)
	}
	catalog, err := tools.Catalog()
	if err != nil {
		return fmt.Errorf("bundle-manifest: the tool list: %w", err)
	}
	var list []map[string]string
	for _, t := range catalog {
		list = append(list, map[string]string{"name": t.Name, "description": t.Description})
	}
	// In the order tools/list gives them (by name).
	sort.Slice(list, func(i, j int) bool { return list[i]["name"] < list[j]["name"] })
	m["tools"] = list
	v := versionString()
	m["version"] = bundleVersion(v)
	if !isRelease(v) {
		m["long_description"] = fmt.Sprint(m["long_description"]) + " This is a development build (" + v + "), not a release."
	}
	if *platform != "" {
		exe := "walletgate"
		switch *platform {
		case "darwin", "linux":
		case "win32":
			exe = "walletgate.exe"
		default:
			return usagef("bundle-manifest: --platform %q: expected darwin, linux or win32", *platform)
		}
		m["compatibility"].(map[string]any)["platforms"] = []string{*platform}
		m["server"].(map[string]any)["entry_point"] = "server/" + exe
	}
	if *confirm != "" {
		q, ok := m["user_config"].(map[string]any)["confirm"].(map[string]any)
		if !ok {
			return usagef("bundle-manifest: %s asks for no confirm mode", *template)
		}
		q["default"] = *confirm
	}
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}

// releaseVersion is a release tag: v1.2.3 (a pre-release suffix allowed).
var releaseVersion = regexp.MustCompile(`^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// pseudoVersion ends a Go pseudo-version (v0.0.0-20261202003807-92ddafa1b2c3):
// a commit, not a release.
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)

// isRelease reports whether v is a release's version.
func isRelease(v string) bool { return releaseVersion.MatchString(v) && !pseudoVersion.MatchString(v) }

// bundleVersion is the build's version as the semantic version a manifest
// needs: a release tag without its v; anything else (dev, a commit, a
// describe past a tag) as 0.0.0-dev with the build's version as build
// metadata, so that a development bundle says what it is.
func bundleVersion(v string) string {
	if isRelease(v) {
		return strings.TrimPrefix(v, "v")
	}
	meta := strings.Trim(regexp.MustCompile(`[^0-9A-Za-z.]+`).ReplaceAllString(v, "."), ".")
	if meta == "" || meta == "dev" {
		return "0.0.0-dev"
	}
	return "0.0.0-dev+" + meta
}
