package http

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// pipeBody is an io.Pipe whose Close, from any goroutine, ends a Read.
type pipeBody struct {
	*io.PipeReader
	reads chan int // what each Read returned
}

func (p *pipeBody) Read(b []byte) (int, error) {
	n, err := p.PipeReader.Read(b)
	p.reads <- n
	return n, err
}

func TestReadAhead(t *testing.T) {
	t.Run("ahead of the reader, up to max", func(t *testing.T) {
		pr, pw := io.Pipe()
		body := &pipeBody{pr, make(chan int, 100)}
		r := newReadAhead(body, 10)
		go func() { _, _ = pw.Write(bytes.Repeat([]byte("x"), 25)) }()
		// Nobody reads: fill takes 10 bytes or more, then waits.
		got := 0
		for got < 10 {
			got += <-body.reads
		}
		select {
		case n := <-body.reads:
			t.Fatalf("read %d more while %d were not taken", n, got)
		case <-time.After(50 * time.Millisecond):
		}
		select {
		case <-r.complete:
			t.Fatal("complete before the end")
		default:
		}
		pw.Close()
		all, err := io.ReadAll(r)
		if err != nil || len(all) != 25 {
			t.Fatalf("%d bytes, %v", len(all), err)
		}
		<-r.complete
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an error ends the reads, not complete", func(t *testing.T) {
		pr, pw := io.Pipe()
		r := newReadAhead(&pipeBody{pr, make(chan int, 100)}, 1<<20)
		boom := errors.New("boom")
		go func() {
			_, _ = pw.Write([]byte("abc"))
			pw.CloseWithError(boom)
		}()
		all, err := io.ReadAll(r)
		if string(all) != "abc" || !errors.Is(err, boom) {
			t.Fatalf("%q, %v", all, err)
		}
		select {
		case <-r.complete:
			t.Fatal("complete after a failure")
		default:
		}
		r.Close()
	})
	t.Run("Close ends a blocked fill and Read", func(t *testing.T) {
		pr, _ := io.Pipe()
		r := newReadAhead(&pipeBody{pr, make(chan int, 100)}, 1<<20)
		done := make(chan error, 1)
		go func() {
			_, err := r.Read(make([]byte, 8))
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, errReadAheadClosed) {
			t.Fatalf("Read after Close: %v", err)
		}
	})
}
