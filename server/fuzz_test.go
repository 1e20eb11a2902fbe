package server

import (
	"bytes"
	"errors"
	"testing"

	"github.com/headroom-planner/headroom/app"
)

// FuzzDecodeRequest feeds arbitrary bodies to the request decoder and the
// conversions to app requests: no panic, and every failure is a usage
// error (a 400), never a 500.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"meta-llama/Llama-3.1-8B-Instruct","hardware":"nvidia-rtx-4090","context":"32k","users":4}`,
		`{"model":"m","workload":"prompt=1024,gen=256,users=8","slo":"ttft=1s,tpot=50ms","engines":"vllm,llama.cpp"}`,
		`{"context":8192,"ctx-size":"64k","host-memory":"64GiB","gpu-memory-utilization":0.9}`,
		`{"hardware":"2xrtx-3090,this,,","workload":"rate=90/min"}`,
		`{"context":-1}`, `{"context":1e400}`, `[]`, `null`, `{}{}`, ``, `{"devices":9999999999999999999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		q, err := DecodeRequest(bytes.NewReader(body))
		if err != nil {
			if !errors.Is(err, app.ErrUsage) {
				t.Fatalf("decode error %v is not a usage error", err)
			}
			return
		}
		for _, conv := range []func() error{
			func() error { _, err := q.scenario(); return err },
			func() error { _, err := q.plan(); return err },
			func() error { _, err := q.compare(); return err },
		} {
			if err := conv(); err != nil && !errors.Is(err, app.ErrUsage) {
				t.Fatalf("conversion error %v is not a usage error", err)
			}
		}
	})
}
