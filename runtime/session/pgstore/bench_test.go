//go:build unix

package pgstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/dshkit/dsh/internal/pgtest"
	"github.com/dshkit/dsh/runtime/loop"
	"github.com/dshkit/dsh/runtime/session"
)

// The benchmarks compare this store with the JSONL file on the same machine, in one run
// (docs/performance.md): go test -run '^$' -bench . ./runtime/session/pgstore

// cpuTime is the CPU time of this process so far (all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter reports, per op, the CPU time of the client (this process) and of the server
// between start and stop: a loaded machine inflates wall times, not CPU times.
type cpuMeter struct {
	s              *pgtest.Server
	client, server time.Duration
}

func (m *cpuMeter) start() { m.client, m.server = cpuTime(), m.s.CPUTime() }

func (m *cpuMeter) report(b *testing.B, ops int, unit string) {
	client, server := cpuTime()-m.client, m.s.CPUTime()-m.server
	b.ReportMetric(float64(client.Microseconds())/float64(ops), "client-cpu-µs/"+unit)
	b.ReportMetric(float64(server.Microseconds())/float64(ops), "server-cpu-µs/"+unit)
}

// benchStore opens a new session log on kind ("jsonl" or "postgres"); url is the
// benchmark's schema.
func benchStore(b *testing.B, kind, url string, db *DB, id string) session.Store {
	b.Helper()
	if kind == "jsonl" {
		f, _, err := session.OpenFile(filepath.Join(b.TempDir(), id+".jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	st, err := db.Open(context.Background(), id)
	if err != nil {
		b.Fatal(err)
	}
	return st
}

// BenchmarkAppend measures appends of whole turns (the nine events of turnEvents, a tool
// result of 200 bytes; 230 bytes an event on average) with the default sync policy (a sync
// at each turn/end), to one session and to 64 sessions at once (one goroutine each, one
// DB). One op is one event; events/s is the throughput of all sessions together.
func BenchmarkAppend(b *testing.B) {
	s := server(b)
	for _, kind := range []string{"jsonl", "postgres"} {
		for _, sessions := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/sessions=%d", kind, sessions), func(b *testing.B) {
				url := s.Schema(b)
				var db *DB
				if kind == "postgres" {
					db = connect(b, url+"&pool_max_conns=16")
				}
				logs := make([]*session.Log, sessions)
				for i := range logs {
					l, err := session.Open(context.Background(), benchStore(b, kind, url, db, fmt.Sprintf("a%d", i)))
					if err != nil {
						b.Fatal(err)
					}
					logs[i] = l
				}
				turn := turnEvents(1, 200)
				per := (b.N + sessions - 1) / sessions
				b.ResetTimer()
				cpu := cpuMeter{s: s}
				cpu.start()
				start := time.Now()
				var wg sync.WaitGroup
				for _, l := range logs {
					wg.Go(func() {
						for i := range per {
							if _, err := l.Append(context.Background(), turn[i%len(turn)]); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				b.ReportMetric(float64(per*sessions)/elapsed.Seconds(), "events/s")
				cpu.report(b, per*sessions, "event")
				for _, l := range logs {
					if err := l.Close(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkResume measures resuming a session of 100k events (5,000 turns of a real
// agent, two tool calls and a text each): open the store, session.Open and loop.Resume,
// which replays the log and folds the history. One op is one resume.
func BenchmarkResume(b *testing.B) {
	s := server(b)
	url := s.Schema(b)
	db := connect(b, url)
	ctx := context.Background()
	const events = 100_000
	// Write the log once with an agent on a memory store, then copy its lines to a file
	// and to the database.
	mem := session.NewMemory()
	l, err := session.Open(ctx, mem, session.WithSyncPolicy(session.SyncNever))
	if err != nil {
		b.Fatal(err)
	}
	a, err := loop.New(ctx, agentConfig(b, l, &cycleModel{}, quiet))
	if err != nil {
		b.Fatal(err)
	}
	for l.Len() < events {
		runTurn(b, a)
	}
	a.Close()
	path := filepath.Join(b.TempDir(), "log.jsonl")
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(out, 1<<20)
	var rows [][]any
	for ev, err := range l.Events() {
		if err != nil {
			b.Fatal(err)
		}
		line, err := ev.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		w.Write(line)
		w.WriteByte('\n')
		rows = append(rows, []any{"resume", ev.Seq, ev.Type, line})
	}
	n := l.Len()
	l.Close()
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	out.Close()
	st, err := db.Open(ctx, "resume")
	if err != nil {
		b.Fatal(err)
	}
	st.Close()
	if _, err := db.pool.CopyFrom(ctx, pgx.Identifier{"dsh_events"}, []string{"session_id", "seq", "type", "line"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if _, err := db.pool.Exec(ctx, "VACUUM ANALYZE dsh_events"); err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"jsonl", "postgres"} {
		b.Run(fmt.Sprintf("%s/events=%dk", kind, n/1000), func(b *testing.B) {
			cpu := cpuMeter{s: s}
			cpu.start()
			var paused time.Duration
			for range b.N {
				var store session.Store
				if kind == "jsonl" {
					f, _, err := session.OpenFile(path)
					if err != nil {
						b.Fatal(err)
					}
					store = f
				} else {
					st, err := db.Open(ctx, "resume")
					if err != nil {
						b.Fatal(err)
					}
					store = st
				}
				l, err := session.Open(ctx, store)
				if err != nil {
					b.Fatal(err)
				}
				a, err := loop.Resume(ctx, agentConfig(b, l, &cycleModel{}, quiet))
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c0 := cpuTime()
				if l.Len() != n {
					b.Fatalf("resume appended %d events", l.Len()-n)
				}
				a.Close()
				l.Close()
				paused += cpuTime() - c0
				b.StartTimer()
			}
			cpu.client += paused
			cpu.report(b, b.N, "resume")
		})
	}
}

// BenchmarkTurnAt measures one more turn (two model steps, two tool calls, 20 events, the
// default sync policy: one sync per turn) of a session that already ran N turns, on each
// store. A turn's cost should not depend on N. One op is one turn.
func BenchmarkTurnAt(b *testing.B) {
	s := server(b)
	for _, kind := range []string{"jsonl", "postgres"} {
		for _, prior := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/N=%d", kind, prior), func(b *testing.B) {
				url := s.Schema(b)
				var db *DB
				if kind == "postgres" {
					db = connect(b, url)
				}
				ctx := context.Background()
				l, err := session.Open(ctx, benchStore(b, kind, url, db, "turns"))
				if err != nil {
					b.Fatal(err)
				}
				defer l.Close()
				a, err := loop.New(ctx, agentConfig(b, l, &cycleModel{}, quiet))
				if err != nil {
					b.Fatal(err)
				}
				defer a.Close()
				for range prior {
					runTurn(b, a)
				}
				b.ReportAllocs()
				cpu := cpuMeter{s: s}
				cpu.start()
				turns := 0
				for b.Loop() {
					runTurn(b, a)
					turns++
				}
				cpu.report(b, turns, "turn")
			})
		}
	}
}
