package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/ooda-loop/ooda/internal/perfstat"
	"github.com/ooda-loop/ooda/internal/secret"
)

// A Batch makes several files durable together, for the price of few
// journal commits instead of two per file. Each file still goes to a
// temporary file that is fsynced and renamed over its target, so a reader
// or a crash sees every file either old or new, never a mix; what is
// shared is the waiting: the temporary files are fsynced concurrently
// (the file system groups the journal commits), and each directory is
// fsynced once, after every rename into it. A file whose bytes and mode
// are already on disk is not rewritten at all.
//
// A batch never commits the cycle: state.json, whose cycle_in_progress is
// the commit point (docs/state.md), is written after Commit returns, so a
// crash between two files of a batch leaves it at the previous cycle and
// the next cycle recovers exactly as from a crash between two single
// writes.
//
// The Store a batch returns stages every write made through it — the
// Save methods, PrependChangelog, RestoreEvolveFile — until Commit;
// until then a staged file is not on disk and reads through either store
// do not see it. Everything else about a write stays as it is: the path is
// kept inside the project, the bytes are redacted, and the errors name the
// file.
type Batch struct {
	parent *Store
	store  Store
	files  []*batchFile
	byPath map[string]*batchFile
}

// batchFile is one staged write.
type batchFile struct {
	rel, display string
	data         []byte
	perm         os.FileMode
	// f is the temporary file written (or, for a skipped one, the file
	// already in place), open until it is synced.
	f    *os.File
	tmp  string
	skip bool
	err  error
	// marked is whether the file was already in Written before it was
	// staged: a failed commit then leaves the earlier write's mark.
	marked bool
}

// FileError is a file of a batch that was not made durable.
type FileError struct {
	// Path is the file's path as the store names it (EvolvePath,
	// LensPath, …).
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }

// Unwrap returns the error of the write.
func (e *FileError) Unwrap() error { return e.Err }

// BatchError lists the files of a batch that were not made durable, in the
// order they were staged. The batch's other files were.
type BatchError struct {
	Files []FileError
}

func (e *BatchError) Error() string {
	errs := make([]error, len(e.Files))
	for i := range e.Files {
		errs[i] = &e.Files[i]
	}
	return errors.Join(errs...).Error()
}

// Batch starts a batch of writes. Write through Store() and end with
// Commit; a batch not committed writes nothing.
func (s *Store) Batch() *Batch {
	b := &Batch{parent: s, store: *s, byPath: map[string]*batchFile{}}
	b.store.batch, b.store.notices = b, nil
	return b
}

// Store is the store whose writes this batch stages. It shares the
// parent's record of written files (Written): a staged file is listed
// from the moment it is staged, and dropped again if Commit cannot make
// it durable.
func (b *Batch) Store() *Store { return &b.store }

// stage records a write of data (already redacted) to rel; a later write
// of the same file in the batch replaces it.
func (b *Batch) stage(rel, display string, data []byte, perm os.FileMode) {
	if f, ok := b.byPath[rel]; ok {
		f.data, f.display, f.perm = data, display, perm
		return
	}
	f := &batchFile{rel: rel, display: display, data: data, perm: perm, marked: b.parent.written[display]}
	b.files = append(b.files, f)
	b.byPath[rel] = f
}

// batchRenameHook, when set (by tests), runs before each rename of a
// commit of n files, renamed of which are already in place: a crash
// between two files of a batch.
var batchRenameHook func(renamed, n int)

// dirSyncHook, when set (by tests), replaces the fsync of a directory at
// the end of a batch: the way to make one fail.
var dirSyncHook func(dir string) error

// Commit makes every staged file durable, then returns nil, or a
// *BatchError naming each file that was not (the others were). The
// files' marks in Written are kept only for the files made durable.
func (b *Batch) Commit() error {
	files := b.files
	b.files, b.byPath = nil, map[string]*batchFile{}
	// What the staging store repaired on its own is the parent's to say.
	b.parent.notices = append(b.parent.notices, b.store.notices...)
	b.store.notices = nil
	if len(files) == 0 {
		return nil
	}
	r, err := b.parent.openRoot(true)
	if err != nil {
		for _, f := range files {
			f.err = fmt.Errorf("write %s: %w", f.display, err)
		}
		return b.done(files)
	}
	defer r.Close()
	commitIn(r, files)
	return b.done(files)
}

// done forgets the written mark of every file that failed and reports them.
func (b *Batch) done(files []*batchFile) error {
	var be BatchError
	for _, f := range files {
		if f.err != nil {
			if !f.marked {
				delete(b.parent.written, f.display)
			}
			be.Files = append(be.Files, FileError{Path: f.display, Err: f.err})
		}
	}
	if len(be.Files) > 0 {
		return &be
	}
	return nil
}

// commitIn writes files under r: every temporary file first, then every
// fsync at once, then the renames in the order staged, then one fsync per
// directory. A failure of one file does not stop the others; each file's
// err says what happened to it.
//
// Each directory of the batch is made (MkdirAll) and opened once, and
// its files are written, compared, renamed and removed by their names in
// it: every operation of an os.Root walks its path from the root a
// component at a time, and a cycle's dozen files all sit two or three
// levels down, which cost four walks each.
func commitIn(r *os.Root, files []*batchFile) {
	// dirs lists each directory of the batch once, in the order first
	// met, with its files.
	type batchDir struct {
		dir   string
		root  *os.Root
		files []*batchFile
		// synced says that a file of the directory is in place, so the
		// directory is synced.
		synced bool
	}
	var dirs []*batchDir
	byDir := map[string]*batchDir{}
	for _, f := range files {
		d := filepath.Dir(f.rel)
		bd := byDir[d]
		if bd == nil {
			bd = &batchDir{dir: d}
			byDir[d] = bd
			dirs = append(dirs, bd)
		}
		bd.files = append(bd.files, f)
	}
	for _, bd := range dirs {
		bd.root = r
		if bd.dir == "." {
			continue
		}
		failed := func(op string, err error) {
			bd.root = nil
			for _, f := range bd.files {
				f.err = fmt.Errorf("write %s: %w", f.display, fsErr(op, f.display, err))
			}
		}
		if err := r.MkdirAll(bd.dir, 0o755); err != nil {
			failed("mkdir", err)
			continue
		}
		sub, err := openSubRoot(r, bd.dir)
		if err != nil {
			failed("create", err)
			continue
		}
		defer sub.Close()
		bd.root = sub
	}
	// One buffer compares every file already in place with its new
	// bytes, in turn: a cycle's batch holds a dozen files, several of
	// them at their cap and so of their old size.
	var scratch []byte
	for _, f := range files {
		if f.err == nil {
			prepare(byDir[filepath.Dir(f.rel)].root, f, &scratch)
		}
	}
	var wg sync.WaitGroup
	for _, f := range files {
		if f.f == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			perfstat.FileSync()
			if err := f.f.Sync(); err != nil && f.err == nil {
				f.err = fmt.Errorf("sync %s: %w", f.display, err)
			}
			if err := f.f.Close(); err != nil && f.err == nil {
				f.err = fmt.Errorf("close %s: %w", f.display, err)
			}
			f.f = nil
		}()
	}
	wg.Wait()
	renamed := 0
	for _, f := range files {
		bd := byDir[filepath.Dir(f.rel)]
		if f.err == nil && !f.skip {
			if beforeRenameHook != nil {
				beforeRenameHook()
			}
			if batchRenameHook != nil {
				batchRenameHook(renamed, len(files))
			}
			if err := bd.root.Rename(f.tmp, filepath.Base(f.rel)); err != nil {
				f.err = fmt.Errorf("rename %s: %w", f.display, fsErr("rename", f.display, err))
			} else {
				renamed++
				perfstat.DurableWrite()
			}
		}
		if f.err != nil {
			if f.tmp != "" {
				_ = bd.root.Remove(f.tmp)
			}
			continue
		}
		bd.synced = true
	}
	// A directory holding only skipped files is synced too: its entries
	// may have been made by another program (a git merge of committed
	// state) that never synced them, and a directory with nothing
	// pending costs no journal commit.
	// The directories are synced at once, as the files were.
	for _, bd := range dirs {
		if !bd.synced {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := syncDir(bd.root, bd.dir); err != nil {
				for _, f := range bd.files {
					if f.err == nil {
						f.err = fmt.Errorf("sync dir of %s: %w", f.display, err)
					}
				}
			}
		}()
	}
	wg.Wait()
}

// prepare opens what commitIn will fsync for f, in r, the root of f's
// directory: the file already in place when it holds exactly f's bytes
// (f.skip), or else a new temporary file holding them (f.tmp, its name
// in that directory). f.err is set on failure. scratch is the buffer the
// comparison reads into (see readsAsIn).
func prepare(r *os.Root, f *batchFile, scratch *[]byte) {
	base := filepath.Base(f.rel)
	if same := openSame(r, base, f.data, f.perm, scratch); same != nil {
		f.f, f.skip = same, true
		return
	}
	var err error
	for i := 0; ; i++ {
		f.tmp = tempName(base)
		f.f, err = r.OpenFile(f.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i >= 100 {
			f.tmp, f.f = "", nil
			f.err = fmt.Errorf("write %s: %w", f.display, fsErr("create", f.display, err))
			return
		}
	}
	if _, err = f.f.Write(f.data); err != nil {
		f.err = fmt.Errorf("write %s: %w", f.display, err)
	} else if err = f.f.Chmod(f.perm); err != nil {
		f.err = fmt.Errorf("write %s: %w", f.display, err)
	}
	if f.err != nil {
		f.f.Close()
		f.f = nil
	}
}

// openSame returns the file at name, open for reading, when it already is
// what a rewrite would make it: a regular file (not a symlink, which a
// rewrite replaces), of one link, owned by this process's user, with perm
// and exactly data. Otherwise nil. At most len(data)+1 bytes are read,
// and only from a file of data's size, into scratch (see readsAsIn).
func openSame(r *os.Root, name string, data []byte, perm os.FileMode, scratch *[]byte) *os.File {
	fi, err := r.Lstat(name)
	if err != nil || !sameShape(fi, int64(len(data)), perm) {
		return nil
	}
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	ofi, err := f.Stat()
	if err != nil || !os.SameFile(fi, ofi) || !sameShape(ofi, int64(len(data)), perm) {
		f.Close()
		return nil
	}
	if !readsAsIn(f, data, scratch) {
		f.Close()
		return nil
	}
	return f
}

// sameChunk is how much of a file readsAs reads at a time.
const sameChunk = 16 << 10

// readsAsIn says whether what is left to read of f is exactly data. It
// reads a piece at a time and stops at the first piece that differs: a
// rewritten file usually differs near its start (a count, the newest
// entry), and a file at its cap keeps its size, so reading it whole
// before comparing cost a read and a growing buffer of every such file.
// At most len(data)+1 bytes are read; a read error is a difference. The
// pieces are read into *scratch, grown when it is too short for one and
// kept for the next call (a batch compares its files in turn): what it
// held before is only ever overwritten, never compared.
func readsAsIn(f io.Reader, data []byte, scratch *[]byte) bool {
	n := min(len(data)+1, sameChunk)
	if cap(*scratch) < n {
		*scratch = make([]byte, n)
	}
	buf := (*scratch)[:n]
	off := 0
	for {
		// Up to one byte past data: a longer file differs.
		want := min(len(buf), len(data)-off+1)
		n, err := io.ReadFull(f, buf[:want])
		if off+n > len(data) || !bytes.Equal(buf[:n], data[off:off+n]) {
			return false
		}
		off += n
		switch err {
		case nil:
		case io.EOF, io.ErrUnexpectedEOF:
			return off == len(data)
		default:
			return false
		}
	}
}

// sameShape reports whether fi is a regular file of size bytes with perm,
// one link, owned by this process's effective user.
func sameShape(fi fs.FileInfo, size int64, perm os.FileMode) bool {
	if !fi.Mode().IsRegular() || fi.Size() != size || fi.Mode().Perm() != perm {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1 && int(st.Uid) == os.Geteuid()
}

// syncDir fsyncs the directory r is the root of, dir (as the batch
// names it).
func syncDir(r *os.Root, dir string) error {
	perfstat.DirSync()
	if dirSyncHook != nil {
		return dirSyncHook(dir)
	}
	d, err := r.Open(".")
	if err != nil {
		return fsErr("open", dir, err)
	}
	defer d.Close()
	return d.Sync()
}

// writeStaged is writeFile's body: data (redacted) goes to the store's
// batch when it has one, or is made durable at once as a batch of its own.
func (s *Store) writeStaged(rel, display string, data []byte) error {
	data = secret.RedactBytes(data)
	if s.batch != nil {
		s.batch.stage(rel, display, data, 0o644)
		return nil
	}
	r, err := s.openRoot(true)
	if err != nil {
		return fmt.Errorf("write %s: %w", display, err)
	}
	defer r.Close()
	f := &batchFile{rel: rel, display: display, data: data, perm: 0o644}
	commitIn(r, []*batchFile{f})
	return f.err
}
