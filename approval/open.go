package approval

// Opening a preview's page for the person (WALLETGATE_OPEN_BROWSER). Rules:
// the opener is started with no stdin, stdout or stderr of walletgate's (its
// stdout is the JSON-RPC stream); walletgate never waits on it to answer a
// call (a browser started by xdg-open can outlive it), but Close waits for
// the ones still running so that a stopping walletgate leaves none behind
// unaccounted; on Linux and the BSDs the platform's opener is used only with
// a desktop session (DISPLAY or WAYLAND_DISPLAY), since xdg-open without one
// falls back to a text browser on a terminal walletgate does not have; the
// opener is given a local file that sends the browser on to the page
// (WriteLauncher), never the page's address, whose secret would otherwise
// sit on a command line that every local user can read in the process list.

import (
	"errors"
	"fmt"
	"html"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Opener opens an approval page's address in the person's browser. A nil
// *Opener opens nothing. It is safe for concurrent use.
type Opener struct {
	argv []string // the program and its arguments before the address
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error // openers that ended with an error (Close returns them)
}

// NewOpener returns the opener setting says ("on" or "": the platform's;
// "off"; or the absolute path of a program given the address), with getenv
// reading the environment. It returns nil and why when nothing can be
// opened: off, no opener on this platform, or no desktop session.
func NewOpener(setting string, getenv func(string) string) (*Opener, string) {
	switch setting {
	case "off":
		return nil, "WALLETGATE_OPEN_BROWSER=off"
	case "", "on":
	default:
		return &Opener{argv: []string{setting}}, ""
	}
	var argv []string
	switch runtime.GOOS {
	case "darwin":
		argv = []string{"open"}
	case "windows":
		argv = []string{"rundll32", "url.dll,FileProtocolHandler"}
	default:
		if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
			return nil, "no desktop session (neither DISPLAY nor WAYLAND_DISPLAY is set)"
		}
		argv = []string{"xdg-open"}
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, argv[0] + " is not installed"
	}
	argv[0] = path
	return &Opener{argv: argv}, ""
}

// Open starts the opener on url and returns once it is started (not when
// the page is open: that is the browser's business); an error means it
// could not even be started.
func (o *Opener) Open(url string) error {
	if o == nil {
		return errors.New("no opener")
	}
	cmd := exec.Command(o.argv[0], append(o.argv[1:len(o.argv):len(o.argv)], url)...)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", o.argv[0], err)
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		if err := cmd.Wait(); err != nil {
			o.mu.Lock()
			o.errs = append(o.errs, fmt.Errorf("%s: %w", o.argv[0], err))
			o.mu.Unlock()
		}
	}()
	return nil
}

// Close waits for the openers still running and returns the errors of
// those that failed.
func (o *Opener) Close() error {
	if o == nil {
		return nil
	}
	o.wg.Wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	return errors.Join(o.errs...)
}

// WriteLauncher writes into dir (the approvals directory, 0700) a 0600 HTML
// file that sends a browser on to pageURL — a preview's page, .../p/ID —
// and returns the file's file:// address, for an opener. The file is named
// after pid and the preview; RemoveLaunchers removes pid's.
func WriteLauncher(dir string, pid int, pageURL string) (string, error) {
	id := path.Base(pageURL)
	if !IsID(id) {
		return "", fmt.Errorf("approval launcher: %q is not a preview's page", id)
	}
	p := filepath.Join(dir, "open-"+strconv.Itoa(pid)+"-"+id+".html")
	esc := html.EscapeString(pageURL)
	body := "<!doctype html>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"0;url=" + esc + "\">\n" +
		"<title>walletgate: preview " + id + "</title>\n<p><a href=\"" + esc + "\">Open walletgate's approval page for preview " + id + "</a></p>\n"
	_ = os.Remove(p)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("approval launcher: %w", err)
	}
	_, werr := f.WriteString(body)
	if err := errors.Join(werr, f.Close()); err != nil {
		return "", fmt.Errorf("approval launcher: %w", err)
	}
	slashed := filepath.ToSlash(p)
	if !strings.HasPrefix(slashed, "/") {
		slashed = "/" + slashed // C:/… on Windows
	}
	return (&url.URL{Scheme: "file", Path: slashed}).String(), nil
}

// RemoveLaunchers removes the launchers WriteLauncher wrote for pid.
func RemoveLaunchers(dir string, pid int) {
	files, _ := filepath.Glob(filepath.Join(dir, "open-"+strconv.Itoa(pid)+"-*.html"))
	for _, f := range files {
		_ = os.Remove(f)
	}
}
