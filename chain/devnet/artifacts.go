package devnet

// Where the dev chain finds Uniswap's npm artifacts, and how they get to a
// place a binary outside the source tree can find them.
//
// Rules of this file:
//   - The artifacts are never committed nor downloaded by Go code: npm
//     installs them in testdata/node_modules (pinned by its lock file), and
//     InstallArtifacts copies the few files the dev chain deploys, with each
//     package's package.json and licence, to the user's data directory.
//   - An explicit directory (flag or WALLETGATE_DEV_ARTIFACTS) must hold them;
//     only the searched-for locations may be absent.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
)

// artifactFiles are the files InstallArtifacts copies, relative to a
// node_modules directory: what deployUniswap loads, and what the licences of
// those packages ask to travel with them.
var artifactFiles = []string{
	artifactWETH9, artifactFactory, artifactNPM, artifactQuoter, artifactRouter,
}

// artifactPackages are the npm packages the files above come from.
var artifactPackages = []string{
	"@uniswap/v2-periphery", "@uniswap/v3-core", "@uniswap/v3-periphery", "@uniswap/swap-router-contracts",
}

// DefaultArtifactsDir is where InstallArtifacts puts the artifacts and where
// FindArtifacts looks last: walletgate/dev-artifacts under the user's data
// directory ($XDG_DATA_HOME or ~/.local/share on Linux and other Unixes,
// ~/Library/Application Support on macOS, %LocalAppData% on Windows).
func DefaultArtifactsDir() (string, error) {
	var base string
	var err error
	switch runtime.GOOS {
	case "darwin":
		base, err = os.UserConfigDir() // ~/Library/Application Support
	case "windows":
		base, err = os.UserCacheDir() // %LocalAppData%
	default:
		if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
			base = d
		} else {
			var home string
			home, err = os.UserHomeDir()
			base = filepath.Join(home, ".local", "share")
		}
	}
	if err != nil {
		return "", fmt.Errorf("dev chain: no user data directory for the Uniswap artifacts: %w", err)
	}
	return filepath.Join(base, "walletgate", "dev-artifacts"), nil
}

// HasArtifacts reports whether dir is a node_modules-like directory holding
// the Uniswap packages.
func HasArtifacts(dir string) bool {
	return isDir(filepath.Join(dir, filepath.FromSlash(artifactMarker)))
}

// InstallArtifacts copies the Uniswap artifacts the dev chain deploys from
// the node_modules directory from into to (created 0755: they are public
// build outputs, not secrets), file by file through a temporary name so a
// reader never sees half a file. It returns the number of files copied.
func InstallArtifacts(from, to string) (int, error) {
	if !HasArtifacts(from) {
		return 0, fmt.Errorf("install artifacts: %s holds no %s; run 'cd testdata && npm ci --omit=peer' in the walletgate source tree first", from, artifactMarker)
	}
	files := append([]string{}, artifactFiles...)
	for _, pkg := range artifactPackages {
		files = append(files, pkg+"/package.json")
		for _, lic := range []string{"LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE"} {
			if _, err := os.Stat(filepath.Join(from, filepath.FromSlash(pkg+"/"+lic))); err == nil {
				files = append(files, pkg+"/"+lic)
			}
		}
	}
	for _, rel := range files {
		if err := copyFile(filepath.Join(from, filepath.FromSlash(rel)), filepath.Join(to, filepath.FromSlash(rel))); err != nil {
			return 0, fmt.Errorf("install artifacts: %w", err)
		}
	}
	if !HasArtifacts(to) {
		return 0, errors.New("install artifacts: copied, but " + to + " still holds no " + artifactMarker)
	}
	return len(files), nil
}

func copyFile(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".install-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
