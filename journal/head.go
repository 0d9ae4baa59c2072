package journal

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// head is the content of the head file: the seq and line hash of the last
// record (0 and genesisHash for an empty journal).
type head struct {
	Seq  uint64 `json:"seq"`
	Hash string `json:"hash"`
}

// maxHead bounds what is read of a head file; a valid one is under 100 bytes.
const maxHead = 4 << 10

// readHead reads the head file at path; ok is false if there is none. With
// private set, a head readable or writable by others is refused with an
// *UnavailableError.
func readHead(path string, private bool) (h head, ok bool, err error) {
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return head{}, false, nil
	}
	if err != nil {
		return head{}, false, fmt.Errorf("read journal head: %w", err)
	}
	defer f.Close()
	if private {
		if err := checkPrivate(f, path, false); err != nil {
			return head{}, false, err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxHead+1))
	if err != nil {
		return head{}, false, fmt.Errorf("read journal head: %w", err)
	}
	if len(b) > maxHead {
		return head{}, true, &BrokenError{Path: path, Reason: "not a journal head: too long"}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return head{}, true, &BrokenError{Path: path, Reason: fmt.Sprintf("not a journal head: %v", err)}
	}
	if dec.More() {
		return head{}, true, &BrokenError{Path: path, Reason: "not a journal head: data after the object"}
	}
	if raw, err := hex.DecodeString(h.Hash); err != nil || len(raw) != 32 {
		return head{}, true, &BrokenError{Path: path, Reason: fmt.Sprintf("not a journal head: hash %q is not 64 hex digits", h.Hash)}
	}
	return h, true, nil
}

// writeHead replaces the head file at path with h: it writes tmp, fsyncs it,
// renames it over path and fsyncs dir, so that a crash leaves the old head
// or the new one. The caller holds the exclusive lock, so tmp is its own.
func writeHead(path, tmp string, dir *os.File, h head) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("write journal head: %w", err)
	}
	b = append(b, '\n')
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write journal head: %w", err)
	}
	f, err := openNoFollow(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write journal head: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("write journal head: %w", err)
	}
	if err := syncFile(f); err != nil {
		f.Close()
		return fmt.Errorf("write journal head: fsync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write journal head: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write journal head: %w", err)
	}
	if err := syncFile(dir); err != nil {
		return fmt.Errorf("write journal head: fsync %s: %w", dir.Name(), err)
	}
	return nil
}
