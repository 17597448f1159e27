package voice

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// WarmTTL is how long a warmed-up general decoder waits for speech before it is dropped.
const WarmTTL = 60 * time.Second

// warmDecoder is a pocketsphinx_continuous process started ahead of the speech: it loads the
// general model (about 0.6 s of the 1 s a cold decode of a short command takes) while the
// user speaks, then blocks opening its input, a named pipe, until the recording arrives.
type warmDecoder struct {
	cmd         *exec.Cmd
	dir, fifo   string
	out, stderr bytes.Buffer
	done        chan struct{} // closed when the process has exited
	err         error         // the process's exit error, after done
	timer       *time.Timer
}

// Warm starts a general decoder ahead of speech (the panel calls it when the microphone opens),
// unless one is waiting already or named pipes are unavailable. It is dropped after WarmTTL.
func (p *Pocketsphinx) Warm() error {
	p.warmMu.Lock()
	defer p.warmMu.Unlock()
	if p.warm != nil {
		return nil
	}
	sweepWarmDirs()
	dir, err := os.MkdirTemp("", "tabrelay-voice-warm-")
	if err != nil {
		return err
	}
	fifo := filepath.Join(dir, "speech.wav") // the .wav name makes pocketsphinx read the header
	if err := mkfifo(fifo); err != nil {
		os.RemoveAll(dir)
		return err
	}
	w := &warmDecoder{dir: dir, fifo: fifo, done: make(chan struct{})}
	w.cmd = exec.Command(p.Bin, "-infile", fifo, "-logfn", os.DevNull)
	w.cmd.Stdout, w.cmd.Stderr = &w.out, &w.stderr
	w.cmd.SysProcAttr = childAttr() // dies with the server
	if err := w.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("pocketsphinx: %w", err)
	}
	go func() {
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	w.timer = time.AfterFunc(WarmTTL, func() {
		p.warmMu.Lock()
		mine := p.warm == w
		if mine {
			p.warm = nil
		}
		p.warmMu.Unlock()
		if mine {
			w.stop()
		}
	})
	p.warm = w
	return nil
}

// takeWarm returns the waiting warm decoder, if any, for one decode.
func (p *Pocketsphinx) takeWarm() *warmDecoder {
	p.warmMu.Lock()
	defer p.warmMu.Unlock()
	w := p.warm
	p.warm = nil
	if w != nil {
		w.timer.Stop()
		select {
		case <-w.done: // exited early (killed): not usable
			w.cleanup()
			return nil
		default:
		}
	}
	return w
}

// stop ends the process and removes its pipe.
func (w *warmDecoder) stop() {
	_ = w.cmd.Process.Kill()
	<-w.done
	w.cleanup()
}

func (w *warmDecoder) cleanup() {
	// a writer still blocked opening the pipe is released by a reader
	if f, err := os.OpenFile(w.fifo, os.O_RDONLY|nonblock, 0); err == nil {
		f.Close()
	}
	os.RemoveAll(w.dir)
}

// decode feeds the WAV file to the waiting process and returns its reading.
func (w *warmDecoder) decode(ctx context.Context, wav []byte) (string, error) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f, err := os.OpenFile(w.fifo, os.O_WRONLY, 0) // blocks until the process opens it
		if err != nil {
			return
		}
		_, _ = f.Write(wav) // fails (EPIPE) only when the process is gone: its exit reports it
		f.Close()
	}()
	defer func() {
		wg.Wait()
		os.RemoveAll(w.dir)
	}()
	select {
	case <-w.done:
	case <-ctx.Done():
		_ = w.cmd.Process.Kill()
		<-w.done
		w.cleanup()
		return "", ctx.Err()
	}
	if w.err != nil {
		w.cleanup()
		return "", fmt.Errorf("pocketsphinx failed (%v): %s", w.err, lastLine(w.stderr.String()))
	}
	return strings.Join(strings.Fields(w.out.String()), " "), nil
}

var errNoFIFO = errors.New("named pipes are not available here")

// sweepWarmDirs removes the pipes of warm decoders that outlived their server (killed with it
// before they could clean up): any older than twice WarmTTL.
func sweepWarmDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "tabrelay-voice-warm-*"))
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && time.Since(fi.ModTime()) > 2*WarmTTL {
			os.RemoveAll(d)
		}
	}
}
