package measurements

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/planner"
)

func TestLoadPublished(t *testing.T) {
	rows, rowErrs, err := LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	if len(rowErrs) != 0 {
		t.Fatalf("published file has bad rows: %v", rowErrs)
	}
	// The brief's 963 rows and the 82 of its uncataloged file the
	// catalog now covers (data/README.md).
	if len(rows) != 1045 {
		t.Fatalf("got %d rows, want 1045", len(rows))
	}
	kinds := map[planner.WorkloadKind]int{}
	for _, m := range rows {
		kinds[m.Scenario]++
	}
	// Counts of the collection's scenario column (benchmarks/README.md),
	// plus the uncataloged rows': 11 single, 21 closed, 43 burst, 7 rate.
	want := map[planner.WorkloadKind]int{planner.WorkloadSingle: 495 + 11, planner.WorkloadBatched: 85, planner.WorkloadClosed: 118 + 21,
		planner.WorkloadBurst: 116 + 43, planner.WorkloadRate: 37 + 7, planner.WorkloadOffline: 80, planner.WorkloadCapacity: 32}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("scenario %s: %d rows, want %d", k, kinds[k], n)
		}
	}
	first := rows[0]
	if first.Hardware != "nvidia-a100-sxm4-80gb" || first.Metric != "kv_tokens" || first.Value != 100000 {
		t.Fatalf("first row parsed wrong: %+v", first)
	}
}

func TestRoundTrip(t *testing.T) {
	rows, _, _ := LoadPublished()
	var buf bytes.Buffer
	if err := Write(&buf, rows); err != nil {
		t.Fatal(err)
	}
	again, errs, err := Read(&buf, "rt.csv")
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	if len(again) != len(rows) {
		t.Fatalf("round trip lost rows: %d vs %d", len(again), len(rows))
	}
	for i := range rows {
		if rows[i] != again[i] {
			t.Fatalf("row %d differs:\n%+v\n%+v", i, rows[i], again[i])
		}
	}
}

func TestBadRowsAreReportedNotFatal(t *testing.T) {
	in := "hardware,devices,engine,model,metric,value\n" +
		"nvidia-rtx-4090,1,vllm,m,tg_tps,12\n" +
		"nvidia-rtx-4090,x,vllm,m,tg_tps,12\n" +
		"nvidia-rtx-4090,1,vllm,m,tg_tps,-3\n" +
		",1,vllm,m,tg_tps,3\n"
	rows, errs, err := Read(strings.NewReader(in), "bad.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || len(errs) != 3 {
		t.Fatalf("rows=%d errs=%v", len(rows), errs)
	}
	if !strings.Contains(errs[0].Error(), "bad.csv:3: column devices") {
		t.Fatalf("error does not name file, line and column: %v", errs[0])
	}
}

func TestRowErrorsNameTheFileLine(t *testing.T) {
	in := "hardware,engine,model,metric,value,notes,scenario,request_rate,lengths,statistic\n" +
		"h,vllm,m,tg_tps,1,\"a note\nover two lines\",single,,fixed,mean\n" + // lines 2-3
		"h,vllm,m,tg_tps,1,,sideways,,,\n" + // line 4
		"h,vllm,m,ttft_ms,1,,rate,-2,,\n" + // line 5
		"h,vllm,m,ttft_ms,1,,rate,2,,p50\n" + // line 6
		"h,vllm,m,ttft_ms,1,,rate,2,varied,\n" // line 7
	rows, errs, err := Read(strings.NewReader(in), "w.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Scenario != planner.WorkloadSingle || rows[0].Lengths != planner.LengthsFixed || rows[0].Statistic != planner.StatMean {
		t.Fatalf("good row parsed wrong: %+v", rows)
	}
	want := []string{"w.csv:4: column scenario", "w.csv:5: column request_rate", "w.csv:6: column statistic", "w.csv:7: column lengths"}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want %d", errs, len(want))
	}
	for i, w := range want {
		if !strings.Contains(errs[i].Error(), w) {
			t.Errorf("error %d = %v, want it to name %q", i, errs[i], w)
		}
	}
}

func TestHeaderOnlyIsAnError(t *testing.T) {
	_, _, err := Read(strings.NewReader(strings.Join(planner.MeasurementHeader, ",")+"\n"), "empty.csv")
	if !errors.Is(err, ErrNoRows) {
		t.Fatalf("header-only file: err = %v, want ErrNoRows", err)
	}
}

func TestMissingColumnIsFatal(t *testing.T) {
	_, _, err := Read(strings.NewReader("hardware,engine\nx,y\n"), "h.csv")
	if err == nil || !strings.Contains(err.Error(), `"model"`) {
		t.Fatalf("want missing-column error, got %v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(string(Published[:2000]))
	f.Add("hardware,engine,model,metric,value\n\"a,b\",c,d,e,1e400\n")
	f.Fuzz(func(t *testing.T, s string) {
		rows, _, err := Read(strings.NewReader(s), "fuzz.csv")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, rows); err != nil {
			t.Fatal(err)
		}
	})
}
