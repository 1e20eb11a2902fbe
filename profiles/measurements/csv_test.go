package measurements

import (
	"bytes"
	"strings"
	"testing"
)

func TestLoadPublished(t *testing.T) {
	rows, rowErrs, err := LoadPublished()
	if err != nil {
		t.Fatal(err)
	}
	if len(rowErrs) != 0 {
		t.Fatalf("published file has bad rows: %v", rowErrs)
	}
	if len(rows) != 675 {
		t.Fatalf("got %d rows, want 675", len(rows))
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
